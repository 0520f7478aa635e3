"""pydantic_evals on the shared scripted cases (bench/evals.py runs it in its own venv).

Each case: a fresh pydantic_ai Agent (a FunctionModel: one ``search`` call, then the
answer), scored by a Contains-the-expected-text evaluator and a one-search-call check, at
max_concurrency 8 with no progress bar. Prints one JSON line like tether_evals.py.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _eval_cases import CONCURRENCY, cases, search_result
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_evals import Case, Dataset
from pydantic_evals.evaluators import Evaluator, EvaluatorContext


def script(messages: list[ModelMessage], _info: AgentInfo) -> ModelResponse:
    for part in messages[-1].parts:
        if isinstance(part, ToolReturnPart):
            return ModelResponse(parts=[TextPart(f"done: {part.content}")])
    prompt = next(p.content for m in messages for p in m.parts if isinstance(p, UserPromptPart))
    query = str(prompt).split(" ", 1)[1]
    return ModelResponse(parts=[ToolCallPart("search", {"query": query})])


@dataclass
class Output:
    text: str
    tools: list[str]


async def task(prompt: str) -> Output:
    agent = Agent(FunctionModel(script))

    @agent.tool_plain
    def search(query: str, limit: int = 5) -> str:
        """Search for something."""
        return search_result(query, limit)

    result = await agent.run(prompt)
    tools = [p.tool_name for m in result.all_messages() for p in m.parts
             if isinstance(p, ToolCallPart)]  # fmt: skip
    return Output(result.output, tools)


@dataclass
class ContainsExpected(Evaluator[str, Output, Any]):
    def evaluate(self, ctx: EvaluatorContext[str, Output, Any]) -> bool:
        return str(ctx.expected_output) in ctx.output.text


@dataclass
class OneSearch(Evaluator[str, Output, Any]):
    def evaluate(self, ctx: EvaluatorContext[str, Output, Any]) -> bool:
        return ctx.output.tools == ["search"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    dataset = Dataset(
        name="bench",
        cases=[Case(name=n, inputs=t, expected_output=w) for n, t, w in cases(args.cases)],
        evaluators=[ContainsExpected(), OneSearch()],
    )
    times: list[float] = []
    for _ in range(args.rounds):
        began = time.perf_counter()
        report = asyncio.run(dataset.evaluate(task, max_concurrency=CONCURRENCY, progress=False))
        times.append(time.perf_counter() - began)
        passed = [c for c in report.cases if all(a.value for a in c.assertions.values())]
        if report.failures or len(passed) != args.cases:
            raise SystemExit(f"not every case passed: {len(passed)} of {args.cases}")
    print(json.dumps({"cases": args.cases, "best_s": min(times),
                      "median_s": statistics.median(times)}))  # fmt: skip


if __name__ == "__main__":
    main()
