"""tether durability runner (the project's .venv python). What it measures:

(a) `raw-*`: `await SQLiteStore.append(sid, version, [("message", {...})], lease=...)`
    of one ~300-byte message entry, one append per step on a session that
    grows to --steps entries (10 untimed warm-up appends first); `durable=False`
    (synchronous=NORMAL) and `durable=True` (FULL, fsync). `loop-*`: a real
    Agent loop of --steps steps (ScriptedModel calls the `work` tool, the tool
    returns ~250 characters); a step is one model call plus its tool call, and
    its persist time is the sum of the wall time of every `SQLiteStore.append`
    the loop made during that step (assistant message, tool_intent,
    tool_result, tool message), read by a timing subclass of SQLiteStore.
    `loop-default`: a plain `@tool` (not idempotent, so its tool_intent is
    durable: one fsync per step); `loop-idempotent`: `@tool(idempotent=True)`.
(b) --trials sessions, each --history loop steps then the `ask` tool, which
    calls `ctx.interrupt(...)` (suspended, journal in the file). Per trial,
    timed from `SQLiteStore(path)` + `Agent(..., session_id=...)` to `ask`'s
    body starting again inside `await agent.resume_async({id: answer})`. On
    the way: create (no-op), acquire_lease, load + fold, the durable (fsync)
    `interrupt_answered` append, the `status` append, and the `tool_intent` of
    `ask`: durable (a second fsync) for `resume` (plain `@tool`), not for
    `resume-idempotent` (`@tool(idempotent=True)`). Since issue 11 the answer is not a
    commit of its own: it rides in the commit of the tool's intent (fsync'd for `resume`,
    not for `resume-idempotent`). `confirm` / `confirm-idempotent`: the same, but the
    run suspends at a `Confirm` (an InterventionHandler before `ask`), and `ask` runs
    for the first time on resume without interrupting (LangGraph's pairing: its node
    asks, then continues).
    `load`: `SQLiteStore(path)` + `load()` + `fold()` of a suspended session.
(c) --grow-steps loop steps on one session; `messages`: the tool returns 200
    new characters each step (the conversation grows by 200 characters);
    `state`: the tool does `ctx.state["log"] += 200 characters` and returns "ok".
    Bytes: `sum(length(CAST(data AS BLOB)))` over the session's journal
    entries (everything the loop wrote, including its end-of-run snapshot).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sqlite3
from importlib.metadata import version
from typing import Any

from _durability import GROW_CHARS, MESSAGE_CHARS, clock, latency, main, per_step, sql_sum, text
from _durability import trials as summarize_trials

from tether import Agent, ToolContext, tool
from tether.control import BeforeToolCall, Confirm, InterventionHandler
from tether.durable import SQLiteStore
from tether.messages import Message
from tether.models import ScriptedModel
from tether.session import fold

STEP = [0]
"""Index of the current loop step: bumped by every model call."""
STARTS: list[int] = []
"""clock() each time the `ask` tool's body starts."""


class TimedStore(SQLiteStore):
    """SQLiteStore that records (step, wall ns, durable) of every append."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.appends: list[tuple[int, int, bool]] = []

    async def append(self, *args: Any, **kwargs: Any) -> Any:
        t0 = clock()
        written = await super().append(*args, **kwargs)
        self.appends.append((STEP[0], clock() - t0, bool(kwargs.get("durable"))))
        return written


class CountingStore(SQLiteStore):
    """SQLiteStore that notes (commit time, fsync'd) of every write transaction of a run."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.writes: list[tuple[int, bool]] = []

    async def acquire_lease(self, *args: Any, **kwargs: Any) -> Any:
        lease = await super().acquire_lease(*args, **kwargs)
        self.writes.append((clock(), False))
        return lease

    async def append(self, *args: Any, **kwargs: Any) -> Any:
        written = await super().append(*args, **kwargs)
        self.writes.append((clock(), bool(kwargs.get("durable"))))
        return written


def agent(store: SQLiteStore, sid: str, steps: int, idempotent: bool, mode: str = "") -> Agent:
    """An agent whose model calls `work` for `steps` steps, then `ask` (mode ask*) or ends.

    `work` is idempotent if `idempotent`; `ask` only in the "-idempotent" modes. In the
    "confirm" modes a Confirm before `ask` suspends the run and `ask` does not interrupt.
    """
    confirm = mode.startswith("confirm")

    @tool(name="work", idempotent=idempotent)
    async def work(n: int, ctx: ToolContext) -> str:
        """One step of work."""
        if mode == "state":
            ctx.state["log"] = ctx.state.get("log", "") + text(GROW_CHARS, n)
            return "ok"
        return text(GROW_CHARS if mode == "messages" else MESSAGE_CHARS - 50, n)

    @tool(name="ask", idempotent=mode.endswith("-idempotent"))
    async def ask(ctx: ToolContext) -> str:
        """Asks a human."""
        STARTS.append(clock())
        return "approved" if confirm else str(ctx.interrupt("approve", "continue?"))

    def script(messages: Any, tools: Any) -> dict[str, Any]:
        STEP[0] += 1
        done = sum(1 for m in messages if m.role == "tool")
        if done < steps:
            return {"tool_calls": [{"name": "work", "args": {"n": done + 1}}]}
        if mode.startswith(("ask", "confirm")) and messages[-1].tool_results[0].name != "ask":
            return {"tool_calls": [{"name": "ask", "args": {}}]}
        return {"text": "done"}

    interventions = [ConfirmAsk()] if confirm else []
    return Agent(
        model=ScriptedModel(script),
        tools=[work, ask],
        store=store,
        session_id=sid,
        interventions=interventions,
        limits=None,  # a run of --steps tool calls: the default turn limit would stop it
    )


class ConfirmAsk(InterventionHandler):
    def before_tool_call(self, event: BeforeToolCall) -> Confirm | None:
        return Confirm("run ask?") if event.tool_call.name == "ask" else None


async def raw(path: str, steps: int, durable: bool) -> dict[str, Any]:
    store = SQLiteStore(path)
    await store.create("raw")
    lease = await store.acquire_lease("raw")
    entry = {"message": Message.assistant(text(MESSAGE_CHARS - 70, 0)).to_dict()}
    samples = []
    for version_ in range(steps + 10):  # the first 10 are warm-up
        t0 = clock()
        await store.append("raw", version_, [("message", entry)], durable=durable, lease=lease)
        if version_ >= 10:
            samples.append(clock() - t0)
    await store.close()
    data_bytes = sql_sum(path, "SELECT max(length(CAST(data AS BLOB))) FROM entries")
    return {**latency(samples), "entry_bytes": data_bytes}


async def loop(path: str, steps: int, idempotent: bool) -> dict[str, Any]:
    store = TimedStore(path)
    STEP[0] = 0
    result = await agent(store, "loop", steps, idempotent).invoke_async("go")
    assert result.stop_reason == "end_turn", result.stop_reason
    per: dict[int, list[tuple[int, bool]]] = {}
    for step, ns, durable in store.appends:
        per.setdefault(step, []).append((ns, durable))
    timed = [per[s] for s in range(1, steps + 1)]
    await store.close()
    return {
        **latency([sum(ns for ns, _ in calls) for calls in timed]),
        "appends_per_step": sum(len(c) for c in timed) / steps,
        "fsyncs_per_step": sum(d for c in timed for _, d in c) / steps,
    }


async def suspended(path: str, history: int, n: int, mode: str, prefix: str = "") -> dict[str, str]:
    """Untimed: `n` sessions suspended after the same `history`; session id -> interrupt id."""
    ids = {}
    for t in range(n):
        store, sid = SQLiteStore(path), f"{prefix or mode}{t}"
        result = await agent(store, sid, history, True, mode).invoke_async("go")
        assert result.stop_reason == "interrupt", result.stop_reason
        ids[sid] = result.interrupts[0].id
        await store.close()
    return ids


async def resume_trials(path: str, history: int, n: int, mode: str) -> dict[str, Any]:
    """Per session: fresh store + Agent, then resume_async up to `ask` starting again.
    Also counted: write transactions and fsync'd ones committed before `ask` started."""
    samples = []
    writes, fsyncs = set(), set()
    for sid, iid in (await suspended(path, history, n, mode)).items():
        gc.collect()
        t0 = clock()
        store = CountingStore(path)
        fresh = agent(store, sid, history, True, mode)
        result = await fresh.resume_async({iid: "approve" if mode.startswith("confirm") else "yes"})
        samples.append(STARTS[-1] - t0)
        before = [durable for at, durable in store.writes if at <= STARTS[-1]]
        writes.add(len(before))
        fsyncs.add(sum(before))
        assert result.stop_reason == "end_turn", result.stop_reason
        assert result.text == "done", result.text
        await store.close()
    return {
        **summarize_trials(samples),
        "writes_before_tool": sorted(writes),
        "fsyncs_before_tool": sorted(fsyncs),
    }


async def load_trials(path: str, sids: list[str]) -> list[int]:
    samples = []
    for sid in sids:
        gc.collect()
        t0 = clock()
        store = SQLiteStore(path)
        record = await store.load(sid)
        assert record is not None, sid
        assert record.status == "suspended", record.status
        fold(record)
        samples.append(clock() - t0)
        await store.close()
    return samples


async def resume(path: str, history: int, n: int) -> dict[str, Any]:
    out = {
        mode: await resume_trials(path, history, n, name)
        for mode, name in (
            ("resume", "ask"),
            ("resume-idempotent", "ask-idempotent"),
            ("confirm", "confirm"),
            ("confirm-idempotent", "confirm-idempotent"),
        )
    }
    load = await load_trials(path, list(await suspended(path, history, n, "ask", "load")))
    con = sqlite3.connect(path)
    count, size = con.execute(
        "SELECT count(*), sum(length(CAST(data AS BLOB))) FROM entries WHERE session_id = 'load0'"
    ).fetchone()
    con.close()
    return {
        **out,
        "load": summarize_trials(load),
        "history_steps": history,
        "journal_entries": count,
        "journal_bytes": size,
    }


async def grow(path: str, steps: int, mode: str) -> dict[str, Any]:
    store = SQLiteStore(path)
    result = await agent(store, "grow", steps, True, mode).invoke_async("go")
    assert result.stop_reason == "end_turn", result.stop_reason
    await store.close()
    payload = sql_sum(path, "SELECT sum(length(CAST(data AS BLOB))) FROM entries")
    return per_step(steps, payload, path)


async def measure(args: argparse.Namespace, work: str) -> dict[str, Any]:
    def db(name: str) -> str:
        return os.path.join(work, f"{name}.db")

    a = {
        "raw-normal": await raw(db("raw-normal"), args.steps, False),
        "raw-full": await raw(db("raw-full"), args.steps, True),
        "loop-idempotent": await loop(db("loop-idem"), args.steps, True),
        "loop-default": await loop(db("loop-default"), args.steps, False),
    }
    b = await resume(db("resume"), args.history, args.trials)
    c = {
        mode: await grow(db(f"grow-{mode}"), args.grow_steps, mode)
        for mode in ("messages", "state")
    }
    return {"name": "tether", "version": f"tether {version('tether')}", "a": a, "b": b, "c": c}


if __name__ == "__main__":
    main(lambda args, work: asyncio.run(measure(args, work)))
