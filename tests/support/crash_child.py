"""A durable session run in a child process that the crash campaign kills with SIGKILL.

Usage: python crash_child.py DB SESSION EFFECTS MODE ANSWERS TARGET
MODE: start (invoke with the prompt) | resume (``agent.resume(ANSWERS)``); ANSWERS is JSON
or ``-``. TARGET: the kill point to stop at (0: none).

Kill points are counted in this process, in order: for every journal append, ``commit``
(inside its transaction, before COMMIT: the append must not survive) and ``ack`` (after
``append`` returned); for every side effect of the tool, ``effect`` (line written and
fsynced, result not yet journaled). At the target point the child prints ``AT`` and
blocks until the parent kills it.

Stdout protocol, one line each, flushed before the child continues:
``DURABLE <seq> <kind> <session>`` for every entry committed (printed right after its
group commit, before any caller hears of it), ``ACK <seq> <kind> <session>`` for every
acknowledged entry, ``AT <point> <where> <detail>``, ``RESULT <json>`` at the end.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from tether import Agent, ToolContext, tool
from tether.durable import SQLiteStore
from tether.durable.sqlite.threads import offloaded
from tether.models import ScriptedModel

PROMPT = "write the lines"
SCRIPT: list[list[tuple[str, str]]] = [
    [("a", "L1")],
    [("b1", "L2"), ("b2", "L3"), ("b3", "L4")],  # disjoint slots: one parallel group
    [("c", "L5")],
    [("d", "L6")],
]
"""Tool calls (slot, line) of each model turn before the final answer."""
LINES = [line for turn in SCRIPT for _, line in turn]

_out = threading.Lock()


def emit(line: str) -> None:
    with _out:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


class CrashStore(SQLiteStore):
    """An SQLiteStore that reports acknowledged and committed entries and blocks at the
    target point.

    The store's writes run on its writer thread in group commits: ``commit`` points are
    reached there (inside the append's part of the group commit), ``ack`` and ``effect``
    points on the threads that called. A gate keeps the two apart: a point waits for a
    group commit in progress to finish (and print its ``DURABLE`` lines), and the point
    that stops the child keeps the gate, so no later group commit can start before the
    kill. What the journal holds at a kill is thus exactly what was printed ``DURABLE``.
    """

    def __init__(self, path: str, target: int) -> None:
        super().__init__(path)
        self.target = target
        self.points = 0
        self._gate = threading.RLock()
        self._marked = threading.local()  # the append the writer thread runs, if any
        self._committing: list[tuple[str, list[Any]]] = []  # writer thread only

    def point(self, where: str, detail: str) -> None:
        self._gate.acquire()
        self.points += 1
        if self.points != self.target:
            self._gate.release()
            return
        emit(f"AT {self.target} {where} {detail}")
        while True:  # the parent sends SIGKILL; the gate stays taken
            time.sleep(60)

    @contextlib.contextmanager
    def _batch(self, durable: bool) -> Iterator[Any]:
        with self._gate:
            self._committing = []
            with super()._batch(durable) as batch:
                yield batch
            for session_id, written in self._committing:
                for entry in written:
                    emit(f"DURABLE {entry.seq} {entry.kind} {session_id}")
            self._committing = []

    @contextlib.contextmanager
    def _tx(self, begin: str = "BEGIN IMMEDIATE", *, durable: bool = False) -> Iterator[Any]:
        with super()._tx(begin, durable=durable) as conn:
            yield conn
            appending = getattr(self._marked, "kinds", None)
            if appending is not None:
                self.point("commit", appending)

    @offloaded("write", durable_kw="durable")
    async def _append_marked(
        self,
        session_id: str,
        expected_version: int,
        entries: Sequence[tuple[Any, dict[str, Any]]],
        **options: Any,
    ) -> Any:
        # on the writer thread, inside a group commit: SQLiteStore.append runs inline
        self._marked.kinds = ",".join(kind for kind, _ in entries)
        try:
            written = await super().append(session_id, expected_version, entries, **options)
        finally:
            self._marked.kinds = None
        self._committing.append((session_id, written))
        return written

    async def append(
        self,
        session_id: str,
        expected_version: int,
        entries: Sequence[tuple[Any, dict[str, Any]]],
        **options: Any,
    ) -> Any:
        written = await self._append_marked(session_id, expected_version, entries, **options)
        for entry in written:
            emit(f"ACK {entry.seq} {entry.kind} {session_id}")
        emit(f"COMMITTED {len(written)}")
        self.point("ack", written[-1].kind)
        return written


def script(messages: list[Any], tools: list[dict[str, Any]]) -> dict[str, Any]:
    turn = sum(1 for m in messages if m.role == "assistant")
    if turn >= len(SCRIPT):
        return {"text": "done"}
    calls = [{"name": "write", "args": {"slot": s, "line": line}} for s, line in SCRIPT[turn]]
    return {"text": f"turn {turn}", "tool_calls": calls}


def build(db: str, session_id: str, effects: str, target: int) -> Agent:
    store = CrashStore(db, target)

    @tool(path_params=("slot",))
    def write(slot: str, line: str, ctx: ToolContext) -> str:
        """Append a line to the effects file (not idempotent)."""
        with open(effects, "a", encoding="utf-8") as f:
            f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())
        ctx.state[line] = slot  # a state change journaled after the batch
        store.point("effect", line)
        return f"wrote {line}"

    return Agent(model=ScriptedModel(script), tools=[write], store=store, session_id=session_id)


def run_step(
    build_agent: Callable[[str, str, str, int], Agent], prompt: str, *, history: bool = True
) -> None:
    """The child's step from its argv (DB SESSION EFFECTS MODE ANSWERS TARGET): build the
    agent, start it with ``prompt`` or resume it, print ``RESULT <json>``; with ``history``
    the result carries the agent's messages and state too."""
    db, session_id, effects, mode, answers, target = sys.argv[1:7]
    agent = build_agent(db, session_id, effects, int(target))
    if mode == "start":
        result = agent.run(prompt)
    else:
        result = agent.resume(None if answers == "-" else json.loads(answers))
    report: dict[str, Any] = {
        "stop_reason": result.stop_reason,
        "text": result.text,
        "interrupts": [i.to_dict() for i in result.interrupts],
    }
    if history:
        report["messages"] = [m.to_dict() for m in agent.messages]
        report["state"] = agent.state
    report["points"] = agent.store.points if isinstance(agent.store, CrashStore) else 0
    emit("RESULT " + json.dumps(report))


def main() -> None:
    run_step(build, PROMPT)


if __name__ == "__main__":
    main()
