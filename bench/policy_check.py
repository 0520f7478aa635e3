"""``tether policy check`` throughput: recorded tool calls judged per second.

Usage: `.venv/bin/python bench/policy_check.py [--sessions 1000]`

A SQLite store gets --sessions sessions recorded by real runs (tests/support/policy_store.py:
ScriptedModel agents, one batch of one to three tool calls each); then check_policy runs once
over it, opened read-only, with a Deny, a Confirm and a Transform rule. Prints the build time,
the calls checked and the calls per second (one run).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent / "tests" / "support"))

import policy_store as ps  # noqa: E402
from policy_app import NoEtc  # noqa: E402

from tether import Agent  # noqa: E402
from tether.control import BeforeToolCall, Confirm, InterventionHandler, Transform  # noqa: E402
from tether.durable import SQLiteStore  # noqa: E402
from tether.evals.policy_check import check_policy  # noqa: E402
from tether.messages import ToolCall  # noqa: E402
from tether.models import ScriptedModel  # noqa: E402


class AskProd(InterventionHandler):
    def before_tool_call(self, event: BeforeToolCall) -> Confirm | None:
        return Confirm("prod?") if event.tool_call.arguments.get("env") == "prod" else None


class PinTmp(InterventionHandler):
    def before_tool_call(self, event: BeforeToolCall) -> Transform | None:
        if event.tool_call.name != "read_file":
            return None
        return Transform(lambda c: ToolCall(c.id, c.name, {"path": "/tmp" + c.arguments["path"]}))


async def check(path: Path) -> tuple[int, float]:
    agent = Agent(
        model=ScriptedModel([]), tools=ps.TOOLS, interventions=[NoEtc(), AskProd(), PinTmp()]
    )
    store = SQLiteStore(path, read_only=True)
    try:
        began = time.perf_counter()
        report = await check_policy(store, agent)
        return report.calls, time.perf_counter() - began
    finally:
        await store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "traffic.db"
        began = time.perf_counter()
        ps.build(path, args.sessions)
        built = time.perf_counter() - began
        calls, seconds = asyncio.run(check(path))
    print(f"recorded {args.sessions} sessions in {built:.1f} s (real runs)")
    print(f"policy check: {calls} calls in {seconds:.2f} s = {calls / seconds:,.0f} calls/s")


if __name__ == "__main__":
    main()
