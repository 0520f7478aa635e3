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
   tokens.
   Strands rows (bench/peers/strands_context.py, in Strands' own venv
   bench/.venvs/strands, pinned strands-agents==1.62.0, made on first use as
   bench/overhead.py makes it; `--no-peers` skips them): the same script played
   by a `strands.models.Model` subclass that counts a request as tether's
   ScriptedModel does and refuses one over the window with Strands'
   ContextWindowOverflowException (a refused request is not counted as sent;
   the refusals are listed). Its managers: SlidingWindowConversationManager
   (default, and per_turn with 72 messages, about the 4,000 tokens of tether's
   sliding row) and SummarizingConversationManager (default: on overflow only;
   and proactive at 80%, tether's default threshold), plus
   NullConversationManager without a window, which must equal tether's KeepAll
   row (the same accounting). Ratios are against tether's KeepAll.
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
   Strands: the same invocation with NullConversationManager, a
   SlidingWindowConversationManager(per_turn=True) that never trims, and a
   proactive SummarizingConversationManager that never fires (steady state only).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
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
    model = ScriptedModel(
        _script(turns), name="bench-long", context_window=WINDOW, record_requests=True
    )
    agent = Agent(
        model, tools=[lookup], store=None, execution=Execution(context=context), limits=None
    )  # a long run on purpose: no default cap of 90 model calls
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
    agent = Agent(
        model, tools=[lookup], store=None, execution=Execution(context=context), limits=None
    )  # a long run on purpose: no default cap of 90 model calls

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


def strands(turns: int, repeats: int, sizes: list[int]) -> dict[str, Any]:
    """The Strands rows, from its runner in Strands' own venv (an "error" key if it failed)."""
    from _runs import PEERS, STRANDS, ensure_venv

    ensure_venv(STRANDS)
    flags = ["--turns", str(turns), "--window", str(WINDOW), "--repeats", str(repeats)]
    flags += ["--sizes", ",".join(map(str, sizes))]
    cmd = [str(STRANDS.python), str(PEERS / "strands_context.py"), *flags]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        return {"error": f"exit {proc.returncode}: {proc.stderr.strip()[-2000:]}"}
    return json.loads(lines[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-peers", action="store_true", help="skip the Strands rows")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    turns = 100 if args.quick else 300
    repeats = 15 if args.quick else 50
    sizes = [10, 1_000, 5_000]
    report: dict[str, Any] = {"turns": turns, "window": WINDOW}
    peer = {} if args.no_peers else strands(turns, repeats, sizes)
    if "error" in peer:
        print(f"Strands rows failed: {peer['error']}", file=sys.stderr)

    rows = {
        "none (KeepAll)": tokens_row(turns, KeepAll()),
        "default (Summarizing)": tokens_row(turns, None),
        "SlidingWindow(max_tokens=4000)": tokens_row(turns, SlidingWindow(max_tokens=WINDOW // 2)),
    }
    naive = rows["none (KeepAll)"]["input_tokens"]
    rows = {f"tether {name}": row for name, row in rows.items()}
    rows.update(peer.get("tokens", {}))
    print(f"\nInput tokens over a {turns}-turn session (declared window {WINDOW:,} tokens)")
    print(
        f"{'manager':72} {'input tokens':>13} {'ratio':>7} {'calls':>6} {'compr.':>6} "
        f"{'refused':>7} {'largest req.':>12}"
    )
    for name, row in rows.items():
        ratio = row["input_tokens"] / naive
        row["ratio"] = round(ratio, 4)
        print(
            f"{name:72} {row['input_tokens']:>13,} {ratio:>7.3f} {row['model_calls']:>6} "
            f"{row['compressions']:>6} {row.get('refused_requests', 0):>7} "
            f"{row['largest_request']:>12,}"
            + (f"  FAILED: {row['error']}" if row.get("error") else "")
        )
    report["tokens"] = rows
    if "version" in peer:
        report["strands"] = peer["version"]

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
    if peer.get("overhead"):
        print(
            f"\n{peer['version']}: the same invocation, microseconds (median of {repeats}); "
            "'cost' = the manager's time over NullConversationManager"
        )
        print(
            f"{'H':>6} {'tether':>9} {'Null':>10} {'Sliding':>10} {'Summariz.':>10} "
            f"{'cost Sl.':>9} {'cost Su.':>9} {'Strands/tether':>15}"
        )
        for ours, theirs in zip(curve, peer["overhead"], strict=True):
            null, sliding, summ = theirs["null_us"], theirs["sliding_us"], theirs["summarizing_us"]
            print(
                f"{theirs['messages']:>6} {ours['default_us']:>9.1f} {null:>10.1f} {sliding:>10.1f} "
                f"{summ:>10.1f} {sliding - null:>9.1f} {summ - null:>9.1f} "
                f"{summ / ours['default_us']:>14.1f}x"
            )
        report["strands_overhead"] = peer["overhead"]
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
