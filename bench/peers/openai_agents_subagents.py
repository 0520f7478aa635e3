"""OpenAI Agents SDK runner of the sub-agent benchmark (bench/.venvs/openai-agents/bin/python).

plain: ``agents.Agent(model=FakeModel(...), tools=[add])`` run with
``await Runner.run(agent, PROMPT)``. delegate: the parent's tool is
``child.as_tool(tool_name="helper", ...)`` (the SDK's agents-as-tools; each call is a
fresh run of the child). The fake ``agents.models.interface.Model`` returns instant
scripted ``ModelResponse`` objects. Tracing is disabled (its default exporter would
try to upload spans); a run is stateless, so "fresh conversation" costs nothing.
"""

from __future__ import annotations

import json
from importlib.metadata import version
from typing import Any

from _subagent_harness import ANSWER, CHILD_ANSWER, COUNTS, PROMPT, TASK, TOOL_ARGS, Subject, main
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from agents import Agent, Runner, function_tool, set_tracing_disabled


class FakeModel(Model):
    """Instant scripted model: call ``tool_name`` first, answer once a tool output is in."""

    def __init__(self, tool_name: str, args: dict[str, Any], answer: str) -> None:
        self.tool_name, self.args, self.answer = tool_name, args, answer

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        COUNTS.model_calls += 1
        items = kwargs.get("input", args[1] if len(args) > 1 else None)
        last = items[-1] if isinstance(items, list) and items else {}
        answered = isinstance(last, dict) and last.get("type") == "function_call_output"
        if answered:
            output: list[Any] = [
                ResponseOutputMessage(
                    id="msg_1",
                    content=[
                        ResponseOutputText(annotations=[], text=self.answer, type="output_text")
                    ],
                    role="assistant",
                    status="completed",
                    type="message",
                )
            ]
        else:
            output = [
                ResponseFunctionToolCall(
                    arguments=json.dumps(self.args),
                    call_id="call_1",
                    name=self.tool_name,
                    type="function_call",
                    id="fc_1",
                    status="completed",
                )
            ]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("not used by this benchmark")


@function_tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    COUNTS.tool_calls += 1
    return a + b


async def build(variant: str) -> Subject:
    set_tracing_disabled(True)
    if variant == "plain":
        agent = Agent(name="main", model=FakeModel("add", TOOL_ARGS, ANSWER), tools=[add])
    else:
        child = Agent(name="helper", model=FakeModel("add", TOOL_ARGS, CHILD_ANSWER), tools=[add])
        helper = child.as_tool(tool_name="helper", tool_description="Adds numbers")
        agent = Agent(
            name="main", model=FakeModel("helper", {"input": TASK}, ANSWER), tools=[helper]
        )

    return Subject(
        name="OpenAI Agents SDK",
        version=f"openai-agents {version('openai-agents')}",
        invoke=lambda: Runner.run(agent, PROMPT),
        reset=lambda: None,
        text_of=lambda result: str(result.final_output),
        setup="agents.Agent + Model subclass; delegate: child.as_tool('helper')",
    )


if __name__ == "__main__":
    main(build)
