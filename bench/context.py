"""Context management: input tokens over a long session, and loop overhead vs history size.

Usage: `.venv/bin/python bench/context.py [--quick] [--json PATH]`
(`--quick`: 100 turns and fewer repeats, well under a minute).

1. Tokens: one scripted session of N tool turns (each tool result is about 100
   tokens; the script reads its progress from the latest tool result it sees,
   so it works with any view of the history). Input tokens are what the
   ScriptedModel reports (four characters per token) summed over every call,
   the summarising calls included. Rows: no management (KeepAll, the naive
   history), the default manager (Summarizing with the agent's own model) and
   a SlidingWindow(max_tokens=window/2), all with a declared window of 8,000
   tokens. Strands' SummarizingConversationManager is not run: Strands is not
   installed in this environment (bench/.venvs is absent and the project rule
   is one shared venv).
2. Overhead: one invocation (a prompt, one model call, a text reply) on an
   agent whose history already holds H messages (H = 10, 1,000, 5,000; tool
   batches of about 100 tokens each), timed with perf_counter_ns around
   `invoke_async`, median of R invocations continuing the same conversation,
   with the default manager and with KeepAll (no estimate). The window is
   large enough that nothing is compressed: the difference is the cost of
   knowing the size. The estimate is kept with the conversation and counts
   only what was appended, so that cost should not depend on H. The first
   invocation after a history is loaded (set, or folded from a store) counts
   the whole view once: reported separately, per message (linear in H).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from tether import Agent, Execution, tool
from tether.context import ContextManager, KeepAll, SlidingWindow
from tether.messages import Message, ToolCall, ToolResult
from tether.models import ScriptedModel

RESULT = "x" * 400
WINDOW = 8_000


@tool
def lookup(n: int) -> str:
    """Look a record up."""
    return f"record {n}: {RESULT}"


def _done(messages: list[Message]) -> int:
    for message in reversed(messages):
        for result in message.tool_results:
            return int(result.content.split(":", 1)[0].split()[-1]) + 1
    return 0


def _script(turns: int) -> Any:
    def play(messages: list[Message], specs: list[dict[str, Any]]) -> Any:
        if not specs:  # a summarising call
            return f"summary: {len(messages[-1].text) // 100} hundred chars condensed"
        done = _done(messages)
        if done >= turns:
            return f"done after {done}"
        return {"tool_calls": [{"name": "lookup", "args": {"n": done}}]}

    return play


def tokens_row(turns: int, context: ContextManager | None) -> dict[str, Any]:
    model = ScriptedModel(_script(turns), name="bench-long", context_window=WINDOW)
    agent = Agent(model, tools=[lookup], store=None, execution=Execution(context=context))
    started = time.perf_counter()
    result = agent("look the records up")
    elapsed = time.perf_counter() - started
    assert result.text == f"done after {turns}", result.text
    largest = max(r.messages and _size(r) for r in model.requests)
    return {
        "input_tokens": result.usage.input_tokens,
        "model_calls": result.usage.model_calls,
        "compressions": result.usage.compressions,
        "largest_request": largest,
        "seconds": round(elapsed, 3),
    }


def _size(request: Any) -> int:
    from tether.models.scripted import _estimate_input

    return _estimate_input(request)


def _history(size: int) -> list[Message]:
    messages = [Message.user("start")]
    n = 0
    while len(messages) < size:
        call = ToolCall(f"c{n}", "lookup", {"n": n})
        messages.append(Message("assistant", [call]))
        messages.append(Message("tool", [ToolResult(call.id, "lookup", f"record {n}: {RESULT}")]))
        n += 1
    return messages[:size] if messages[-1].role == "tool" else messages[: size - 1]


def overhead_row(size: int, context: ContextManager | None, repeats: int) -> tuple[float, float]:
    """(first invocation after the history is loaded, median of the next ones), in µs."""
    model = ScriptedModel(lambda m, s: "ok", name="bench-overhead", context_window=10_000_000)
    agent = Agent(model, tools=[lookup], store=None, execution=Execution(context=context))

    async def once() -> float:
        started = time.perf_counter_ns()
        await agent.invoke_async("next")
        return (time.perf_counter_ns() - started) / 1000

    async def run() -> tuple[float, float]:
        firsts = []
        for _ in range(5):  # the first invocation on a freshly loaded history counts it all
            agent.messages = _history(size)
            firsts.append(await once())
        agent.messages = _history(size)
        for _ in range(3):
            await once()
        return statistics.median(firsts), statistics.median([await once() for _ in range(repeats)])

    return asyncio.run(run())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    turns = 100 if args.quick else 300
    repeats = 15 if args.quick else 50
    report: dict[str, Any] = {"turns": turns, "window": WINDOW}

    rows = {
        "none (KeepAll)": tokens_row(turns, KeepAll()),
        "default (Summarizing)": tokens_row(turns, None),
        "SlidingWindow(max_tokens=4000)": tokens_row(turns, SlidingWindow(max_tokens=WINDOW // 2)),
    }
    naive = rows["none (KeepAll)"]["input_tokens"]
    print(f"\nInput tokens over a {turns}-turn session (declared window {WINDOW:,} tokens)")
    print(
        f"{'manager':34} {'input tokens':>13} {'ratio':>7} {'calls':>6} {'compr.':>6} {'largest req.':>12}"
    )
    for name, row in rows.items():
        ratio = row["input_tokens"] / naive
        row["ratio"] = round(ratio, 4)
        print(
            f"{name:34} {row['input_tokens']:>13,} {ratio:>7.3f} {row['model_calls']:>6} "
            f"{row['compressions']:>6} {row['largest_request']:>12,}"
        )
    report["tokens"] = rows

    sizes = [10, 1_000, 5_000]
    print(
        f"\nOne invocation (prompt, one model call, reply) on a history of H messages, "
        f"microseconds (median of {repeats}; 'first' = the first invocation after the "
        "history is loaded, median of 5)"
    )
    print(
        f"{'H':>6} {'KeepAll':>9} {'default':>9} {'cost':>7} {'cost/msg':>9} "
        f"{'first KeepAll':>14} {'first default':>14} {'first cost/msg':>15}"
    )
    curve = []
    for size in sizes:
        keep_first, keep = overhead_row(size, KeepAll(), repeats)
        default_first, default = overhead_row(size, None, repeats)
        cost, first_cost = default - keep, default_first - keep_first
        curve.append(
            {
                "messages": size,
                "keep_all_us": round(keep, 1),
                "default_us": round(default, 1),
                "context_us": round(cost, 1),
                "first_keep_all_us": round(keep_first, 1),
                "first_default_us": round(default_first, 1),
                "first_context_per_message_us": round(first_cost / size, 3),
            }
        )
        print(
            f"{size:>6} {keep:>9.1f} {default:>9.1f} {cost:>7.1f} {cost / size:>9.3f} "
            f"{keep_first:>14.1f} {default_first:>14.1f} {first_cost / size:>15.3f}"
        )
    report["overhead"] = curve
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
