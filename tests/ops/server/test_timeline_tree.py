"""Nested rows in the timeline, from real runs: a three-level agent tree (a subprocess per
step, approvals decided in between) and a compaction by a small-context model; through
GET /api/timeline/{id} and ``tether sessions timeline``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import agent_tree
from live_server import get_ok, live_server, seed
from typer.testing import CliRunner

from tether import Agent, Execution, tool
from tether.context import Summarizing
from tether.context.compaction import SUMMARY_MARK
from tether.durable import SQLiteStore
from tether.messages import Message
from tether.models import ScriptedModel
from tether.ops.cli import app
from tether.ops.server import create_app

ENV: dict[str, str | None] = {"COLUMNS": "240", "NO_COLOR": "1", "TETHER_STORE": None}


def _tree_step(db: Path, effects: Path, *args: str) -> dict[str, Any]:
    return agent_tree.step(db, effects, *args)


async def _approve_all(db: Path, session_id: str) -> dict[str, Any]:
    store = SQLiteStore(db)
    try:
        for approval in await store.approvals.pending(session_id=session_id):
            await store.approvals.decide(approval.id, "approve", decided_by="alice", note="go")
        return await store.approvals.answers_for(session_id)
    finally:
        await store.close()


def _cli(session_id: str, db: Path) -> Any:
    return CliRunner(env=ENV).invoke(app, ["sessions", "timeline", session_id, "--store", str(db)])


async def test_sub_agents_are_nested_under_the_tool_calls_that_ran_them(tmp_path: Path) -> None:
    db, effects = tmp_path / "tree.db", tmp_path / "effects.txt"
    first = await asyncio.to_thread(_tree_step, db, effects, "start")
    assert first["stop_reason"] == "interrupt"
    answers = await _approve_all(db, "tree-1")
    done = await asyncio.to_thread(_tree_step, db, effects, "resume", json.dumps(answers))
    assert done["stop_reason"] == "end_turn", done
    store = SQLiteStore(db)
    tokens, _ = await seed(store)
    await store.close()
    with live_server(create_app(SQLiteStore(db), close_store=True)) as url:
        t = await asyncio.to_thread(get_ok, f"{url}/api/timeline/tree-1", tokens["viewer"])
    steps = t["steps"]
    assert [s["index"] for s in steps] == list(range(len(steps)))
    # the planner's researcher call, the researcher's session right under it
    [researcher] = [s for s in steps if s["kind"] == "tool" and s["title"] == "researcher"]
    assert (researcher["depth"], researcher["session_id"]) == (0, "tree-1")
    mid = "tree-1/researcher#1.p1"
    assert researcher["detail"]["child_session"]["session_id"] == mid
    assert researcher["detail"]["child_session"]["status"] == "completed"
    under = [s for s in steps if s["parent"] == researcher["index"]]
    assert under
    assert all(s["session_id"] == mid and s["depth"] == 1 for s in under)
    assert steps[researcher["index"] + 1]["parent"] == researcher["index"]
    # two coder calls, each with its own session two levels down, its write and approval
    coders = [s for s in under if s["kind"] == "tool" and s["title"] == "coder"]
    assert len(coders) == 2
    for coder in coders:
        leaf = coder["detail"]["child_session"]["session_id"]
        assert leaf.startswith(mid + "/coder#1.k")
        rows = [s for s in steps if s["parent"] == coder["index"]]
        assert {s["depth"] for s in rows} == {2}
        assert {s["session_id"] for s in rows} == {leaf}
        [write] = [s for s in rows if s["kind"] == "tool"]
        assert (write["title"], write["status"]) == ("write", "ok")
        [asked] = [s for s in rows if s["kind"] == "interrupt"]
        # the grandchild's question was answered in the top session's inbox: linked
        assert asked["approval_id"] is not None
        assert asked["detail"]["approval"]["decided_by"] == "alice"
        assert asked["status"] == "answered"
    # rows stay inside the range of the session they nest in
    top = [s for s in steps if s["depth"] == 0]
    assert [s["kind"] for s in top][-1] == "end"
    assert t["axis"]["length"] > 0
    assert len(t["axis"]["places"]) == len(steps)
    # usage: every model call of the tree, each with its session and depth
    depths = sorted({c["depth"] for c in t["usage"]["calls"]})
    assert depths == [0, 1, 2]
    assert t["usage"]["calls"][-1]["cumulative"] == t["usage"]["total_tokens"]

    text = await asyncio.to_thread(_cli, "tree-1", db)
    assert text.exit_code == 0, text.output
    assert "  ↳ run started" in text.output  # a nested row, indented under its tool call
    assert "    ↳ write" in text.output  # two levels down
    assert "child tree-1/researcher#1.p1 (completed)" in text.output


def _compacting_agent(store: SQLiteStore) -> Agent:
    @tool
    def lookup(n: int) -> str:
        """Look a record up."""
        return f"record {n}: " + "x" * 1600

    def play(messages: list[Message], specs: list[dict[str, Any]]) -> Any:
        last = messages[-1].tool_results  # (the view may hold a summary of earlier ones)
        done = int(last[0].content.split(":")[0].split()[-1]) + 1 if last else 0
        if done >= 12:
            return "done"
        return {"text": f"step {done}", "tool_calls": [{"name": "lookup", "args": {"n": done}}]}

    def summarise(messages: list[Message], specs: list[dict[str, Any]]) -> str:
        return "summary of the lookups so far"

    model = ScriptedModel(play, name="small", context_window=2_000, overflow_at=2_000)
    context = Summarizing(ScriptedModel(summarise, name="summariser"))
    return Agent(
        model, tools=[lookup], execution=Execution(context=context), store=store, session_id="c-1"
    )


async def test_a_compaction_is_a_row_with_its_tokens_manager_and_summary(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    store = SQLiteStore(db)
    result = await _compacting_agent(store).invoke_async("look up twelve records")
    assert result.stop_reason == "end_turn", result.reason
    assert result.usage.compressions >= 1
    tokens, _ = await seed(store)
    await store.close()
    with live_server(create_app(SQLiteStore(db), close_store=True)) as url:
        t = await asyncio.to_thread(get_ok, f"{url}/api/timeline/c-1", tokens["viewer"])
    rows = [s for s in t["steps"] if s["kind"] == "compaction"]
    assert len(rows) == result.usage.compressions
    first = rows[0]
    d = first["detail"]
    assert (d["manager"], d["summary"]) == ("Summarizing", "summary")
    assert d["summary_text"].startswith(SUMMARY_MARK)
    assert d["tokens_before"] > d["tokens_after"] > 0
    assert d["reason"] in ("preflight", "threshold", "overflow")
    start, end = d["messages"]
    assert 0 < start < end
    assert first["title"].startswith("context compacted")
    # the compaction comes before the model call that was sent the compacted view
    after = t["steps"][first["index"] + 1]
    assert after["kind"] == "model"
    assert after["start"] >= first["start"]

    text = await asyncio.to_thread(_cli, "c-1", db)
    assert text.exit_code == 0, text.output
    assert "Summarizing" in text.output
    assert f"~{d['tokens_before']} → ~{d['tokens_after']} tokens" in text.output
