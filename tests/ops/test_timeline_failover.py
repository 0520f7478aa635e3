"""Retries and fallbacks per model call in the timeline: a real OpenAI adapter against the
fault server (tests/servers) fails twice with 500, the FallbackChain moves to a second
model, which answers; the next call of the run goes straight to it."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tether import Agent, tool
from tether.durable import SQLiteStore
from tether.models import FallbackChain, OpenAIModel, RetryPolicy
from tether.ops.timeline import read_timeline, timeline_of

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from servers.runner import ThreadServer, fault_app

FAST = RetryPolicy(max_attempts=2, base_delay=0.001, max_delay=0.005, stale_timeout=20)


@pytest.fixture(scope="module")
def fault() -> Iterator[ThreadServer]:
    server = ThreadServer(fault_app()).start()
    yield server
    server.stop()


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _model(fault: ThreadServer, plan: str) -> OpenAIModel:
    return OpenAIModel(plan, base_url=fault.url + "/v1", api_key="sk-test", retry=FAST)


async def _timeline(db: Path, session_id: str) -> dict[str, Any]:
    store = SQLiteStore(db)
    try:
        data = await read_timeline(store, session_id)
    finally:
        await store.close()
    assert data is not None
    return timeline_of(data)


async def test_each_model_call_row_says_its_attempts_reasons_and_who_answered(
    fault: ThreadServer, tmp_path: Path
) -> None:
    db = tmp_path / "f.db"
    primary, backup = _model(fault, "e500~tl-primary"), _model(fault, "tools,text~tl-backup")
    chain = FallbackChain([primary, backup])
    agent = Agent(chain, tools=[add], store=SQLiteStore(db), session_id="fo-1")
    result = await agent.invoke_async("add them")
    await agent.store.close()  # type: ignore[union-attr]
    assert result.stop_reason == "end_turn", result.reason
    assert (result.usage.model_retries, result.usage.model_fallbacks) == (1, 1)

    t = await _timeline(db, "fo-1")
    [run] = [s for s in t["steps"] if s["kind"] == "run"]
    assert run["detail"]["model"] == chain.name
    first, second = [s for s in t["steps"] if s["kind"] == "model"]
    d = first["detail"]
    assert d["attempts"] == 3  # two with the primary (one retry), one with the backup
    assert [r["reason"] for r in d["retries"]] == ["server_error"]
    assert d["retries"][0]["provider"] == primary.name
    [fell] = d["fallbacks"]
    assert (fell["from"], fell["to"], fell["reason"]) == (primary.name, backup.name, "server_error")
    assert "500" in fell["error"] or "server" in fell["error"]
    assert d["model"] == backup.name
    assert first["status"] == "retried"
    assert not first["failed"]
    assert f"3 attempts, answered by {backup.name}" in first["title"]
    # the chain stays on the backup for the rest of the run: one attempt, same model
    assert (second["detail"]["attempts"], second["detail"]["model"]) == (1, backup.name)
    assert (second["detail"]["retries"], second["detail"]["fallbacks"]) == ([], [])
    assert second["status"] == "ok"

    # the CLI shows the same per call
    from typer.testing import CliRunner

    from tether.ops.cli import app

    env = {"COLUMNS": "400", "NO_COLOR": "1", "TETHER_STORE": None}
    args = ["sessions", "timeline", "fo-1", "--store", str(db)]
    shown = await asyncio.to_thread(CliRunner(env=env).invoke, app, args)
    assert shown.exit_code == 0, shown.output
    assert f"3 attempts (server_error, server_error); model {backup.name}" in shown.output


async def test_a_plain_call_says_one_attempt_and_the_runs_model(tmp_path: Path) -> None:
    from tether.models import ScriptedModel

    db = tmp_path / "p.db"
    agent = Agent(ScriptedModel(["hi"], name="plain"), store=SQLiteStore(db), session_id="p-1")
    await agent.invoke_async("hello")
    await agent.store.close()  # type: ignore[union-attr]
    store = SQLiteStore(db)
    record = await store.load("p-1")
    await store.close()
    assert record is not None
    said = [e for e in record.entries if e.kind == "message" and "failover" in e.data]
    assert said == []  # nothing extra is journaled for a call that needed no retry
    [model] = [s for s in (await _timeline(db, "p-1"))["steps"] if s["kind"] == "model"]
    assert (model["detail"]["attempts"], model["detail"]["model"]) == (1, "plain")
