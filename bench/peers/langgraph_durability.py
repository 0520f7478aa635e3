"""LangGraph durability runner (python of bench/.venvs/langgraph). What it measures:

The graph: `StateGraph` with ONE node `step` and a conditional edge back to it
until the step count is reached, so one loop step is one super-step and one
checkpoint (a ReAct agent has two super-steps per model+tool step, so this
favours LangGraph). State: `messages: Annotated[list, operator.add]` of plain
dicts (lighter to serialize than langchain message objects), `log: str`,
`n: int`. Compiled with `SqliteSaver(sqlite3.connect(file))`, run with
`graph.invoke(..., durability="sync")` (each checkpoint is written before the
next step starts, as tether's appends are).

(a) The node appends one message dict with ~300 characters of content. Per
    step: the sum of the wall time of every `put` and `put_writes` call of the
    saver during that step (a timing subclass of SqliteSaver), steps 1..N.
    Once with `PRAGMA synchronous=NORMAL` and once with FULL (what the saver
    gets by default: it sets only journal_mode=WAL, and SQLite's default is FULL).
(b) --trials threads, each --history steps then a step that calls
    `interrupt(...)`. Per trial, timed from `sqlite3.connect` + `SqliteSaver`
    + `builder.compile(checkpointer=...)` to the interrupted node's body
    starting again inside `graph.invoke(Command(resume=...), config)`.
    `load`: connect + saver + compile + `graph.get_state(config)` only.
(c) --grow-steps steps on one thread; `messages`: the node appends a message
    dict with 200 characters of content; `lc`: the same with the usual agent
    state instead (`add_messages` reducer, a langchain `ToolMessage` of 200
    characters); `state`: the node returns
    `{"log": log + 200 characters}`. Bytes: `sum(length(checkpoint) +
    length(metadata))` over `checkpoints` plus `sum(length(value))` over `writes`.
"""

from __future__ import annotations

import argparse
import gc
import operator
import os
import sqlite3
from importlib.metadata import version
from typing import Annotated, Any, TypedDict

from _durability import GROW_CHARS, MESSAGE_CHARS, clock, latency, main, per_step, sql_sum, text
from _durability import trials as summarize_trials
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph, add_messages
from langgraph.types import Command, interrupt

STEP = [0]
"""Index of the current step: bumped by every node run."""
STARTS: list[int] = []
"""clock() each time the node's body starts on the interrupting step."""


class State(TypedDict, total=False):
    messages: Annotated[list[dict[str, Any]], operator.add]
    log: str
    n: int


class MessagesState(TypedDict, total=False):
    """(c) `lc`: the usual agent state, langchain messages merged by `add_messages`."""

    messages: Annotated[list[Any], add_messages]
    n: int


class TimedSaver(SqliteSaver):
    """SqliteSaver that records (step, wall ns) of every put and put_writes."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        super().__init__(conn)
        self.calls: list[tuple[int, int]] = []

    def put(self, *args: Any, **kwargs: Any) -> Any:
        t0 = clock()
        out = super().put(*args, **kwargs)
        self.calls.append((STEP[0], clock() - t0))
        return out

    def put_writes(self, *args: Any, **kwargs: Any) -> None:
        t0 = clock()
        super().put_writes(*args, **kwargs)
        self.calls.append((STEP[0], clock() - t0))


def builder(steps: int, mode: str) -> StateGraph:
    """`step` runs `steps` times (then once more and interrupts, if mode=ask)."""

    def step(state: Any) -> dict[str, Any]:
        n = state.get("n", 0) + 1
        STEP[0] += 1
        if mode == "ask" and n > steps:
            STARTS.append(clock())
            answer = interrupt("continue?")
            return {"n": n, "messages": [{"role": "user", "content": str(answer)}]}
        if mode == "state":
            return {"n": n, "log": state.get("log", "") + text(GROW_CHARS, n)}
        if mode == "lc":
            return {"n": n, "messages": [ToolMessage(text(GROW_CHARS, n), tool_call_id=f"c{n}")]}
        size = GROW_CHARS if mode == "messages" else MESSAGE_CHARS
        return {"n": n, "messages": [{"role": "tool", "content": text(size, n)}]}

    last = steps + 1 if mode == "ask" else steps
    g = StateGraph(MessagesState if mode == "lc" else State)
    g.add_node("step", step)
    g.add_edge(START, "step")
    g.add_conditional_edges("step", lambda s: "step" if s["n"] < last else END, ["step", END])
    return g


def connect(path: str, synchronous: str = "") -> sqlite3.Connection:
    conn = sqlite3.connect(path, check_same_thread=False)
    if synchronous:
        conn.execute(f"PRAGMA synchronous = {synchronous}")
    return conn


def config(thread: str, steps: int) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}, "recursion_limit": steps + 10}


def run(path: str, thread: str, steps: int, mode: str, synchronous: str = "") -> TimedSaver:
    saver = TimedSaver(connect(path, synchronous))
    graph = builder(steps, mode).compile(checkpointer=saver)
    STEP[0] = 0
    start: dict[str, Any] = {"n": 0, "messages": []} if mode == "lc" else {"n": 0, "log": ""}
    graph.invoke(start, config(thread, steps), durability="sync")
    return saver


def persist(path: str, steps: int, synchronous: str) -> dict[str, Any]:
    saver = run(path, "a", steps, "", synchronous)
    per: dict[int, list[int]] = {}
    for step, ns in saver.calls:
        per.setdefault(step, []).append(ns)
    saver.conn.close()
    timed = [per[s] for s in range(1, steps + 1)]
    return {
        **latency([sum(c) for c in timed]),
        "saver_calls_per_step": sum(len(c) for c in timed) / steps,
    }


def resume(path: str, history: int, n: int) -> dict[str, Any]:
    for t in range(n):  # untimed: n interrupted threads with the same history
        run(path, f"r{t}", history, "ask").conn.close()
    resumed, loaded = [], []
    for t in range(n):
        cfg = config(f"r{t}", history)
        gc.collect()
        t0 = clock()
        saver = SqliteSaver(connect(path))
        graph = builder(history, "ask").compile(checkpointer=saver)
        out = graph.invoke(Command(resume="yes"), cfg, durability="sync")
        resumed.append(STARTS[-1] - t0)
        assert out["messages"][-1]["content"] == "yes", out["messages"][-1]
        saver.conn.close()
        gc.collect()
        t0 = clock()
        saver = SqliteSaver(connect(path))
        snapshot = builder(history, "ask").compile(checkpointer=saver).get_state(cfg)
        loaded.append(clock() - t0)
        assert snapshot.values["n"] == history + 1
        saver.conn.close()
    checkpoints = sql_sum(path, "SELECT count(*) FROM checkpoints WHERE thread_id = 'r0'")
    return {
        "resume": summarize_trials(resumed),
        "load": summarize_trials(loaded),
        "history_steps": history,
        "checkpoints": checkpoints,
    }


def grow(path: str, steps: int, mode: str) -> dict[str, Any]:
    run(path, "grow", steps, mode).conn.close()
    payload = sql_sum(
        path,
        "SELECT (SELECT sum(length(CAST(checkpoint AS BLOB)) + length(CAST(metadata AS BLOB))) "
        "FROM checkpoints) + (SELECT coalesce(sum(length(CAST(value AS BLOB))), 0) FROM writes)",
    )
    return per_step(steps, payload, path)


def measure(args: argparse.Namespace, work: str) -> dict[str, Any]:
    def db(name: str) -> str:
        return os.path.join(work, f"{name}.db")

    default_sync = connect(db("probe")).execute("PRAGMA synchronous").fetchone()[0]
    a = {
        "normal": persist(db("a-normal"), args.steps, "NORMAL"),
        "full": persist(db("a-full"), args.steps, "FULL"),
    }
    b = resume(db("resume"), args.history, args.trials)
    c = {
        mode: grow(db(f"grow-{mode}"), args.grow_steps, mode)
        for mode in ("messages", "lc", "state")
    }
    versions = ", ".join(
        f"{p} {version(p)}"
        for p in ("langgraph", "langgraph-checkpoint-sqlite", "langgraph-checkpoint")
    )
    return {
        "name": "LangGraph",
        "version": versions,
        "default_synchronous": {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}[default_sync],
        "a": a,
        "b": b,
        "c": c,
    }


if __name__ == "__main__":
    main(measure)
