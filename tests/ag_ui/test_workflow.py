"""AG-UI serves a workflow: the official ``@ag-ui/client`` HttpAgent (npm, installed as
tests/ag_ui/test_http_agent.py does) runs a thread of ``workflow_app:workflow_factory`` to
the legal branch's interrupt and resumes it (tests/support/ag_ui/workflow_client.cjs)."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import subprocess
from pathlib import Path

from ag_ui_app import post_run, run_input, user
from live_server import live_server
from workflow_app import ADDRESS

from tether.durable import SQLiteStore
from tether.ops.app_loader import load_factory
from tether.ops.server import create_app

HERE = Path(__file__).resolve().parent
SCRIPT = HERE.parent / "support" / "ag_ui" / "workflow_client.cjs"
_spec = importlib.util.spec_from_file_location("ag_ui_http_agent", HERE / "test_http_agent.py")
assert _spec is not None
assert _spec.loader is not None
_http_agent = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_http_agent)
node_modules = _http_agent.node_modules  # the one npm install of @ag-ui/client


async def _tokens(db: Path) -> dict[str, str]:
    store = SQLiteStore(db)
    try:
        caller = (await store.approvers.add("caller", ["invoke"])).token
        boss = (await store.approvers.add("boss", ["invoke", "approve:write"])).token
        return {"CALLER_TOKEN": caller, "BOSS_TOKEN": boss}
    finally:
        await store.close()


def test_the_http_agent_runs_a_workflow_thread_to_its_interrupt_and_resumes_it(
    private_tmp: Path, node_modules: Path, monkeypatch
) -> None:
    db, out = private_tmp / "ag-ui.db", private_tmp / "out.txt"
    monkeypatch.setenv("TETHER_WORKFLOW_STORE", str(db))
    monkeypatch.setenv("TETHER_WORKFLOW_OUT", str(out))
    tokens = asyncio.run(_tokens(db))
    app = create_app(
        SQLiteStore(db), app_factory=load_factory("workflow_app:workflow_factory"), close_store=True
    )
    with live_server(app) as url:
        done = subprocess.run(
            ["node", str(SCRIPT), url, "wf-thread"],
            env={**os.environ, "NODE_PATH": str(node_modules), **tokens},
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stdout + done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["outcome"] == "interrupt", got
    assert got["error"] is None
    [pending] = got["pending"]
    assert pending["message"] == "write 'legal'?"
    assert pending["reason"] == ADDRESS  # the branch's Confirm, by its address
    assert pending["subagentRunId"] == "review#2/legal#1"
    assert pending["toolCallId"] == "review#2/legal#1/w1"  # unique in the thread
    assert got["started"] == ["review#2", "review#2/legal#1", "review#2/tech#2"]
    assert pending["arguments"] == {"text": "legal"}
    assert got["resumedOutcome"] == "success", got
    assert got["resumedError"] is None
    assert got["result"]["text"].startswith('summary: ["legal wrote (ok legal)", "tech: ')
    assert got["leftPending"] == 0
    assert out.read_text().splitlines() == ["wf-thread legal"]  # once


def test_every_tool_call_id_of_a_workflow_stream_is_unique_in_the_thread(
    private_tmp: Path, monkeypatch
) -> None:
    """Without node: the events themselves (a node call is ``1``, ``2`` at every depth)."""
    db = private_tmp / "ag-ui.db"
    monkeypatch.setenv("TETHER_WORKFLOW_STORE", str(db))
    monkeypatch.setenv("TETHER_WORKFLOW_OUT", str(private_tmp / "out.txt"))
    tokens = asyncio.run(_tokens(db))
    app = create_app(
        SQLiteStore(db), app_factory=load_factory("workflow_app:workflow_factory"), close_store=True
    )
    with live_server(app) as url:
        body = run_input("wf-ids", "r1", [user("the plan")])
        status, events = post_run(url, tokens["CALLER_TOKEN"], body)
    assert status == 200
    starts = [
        (e.subagent_run_id, e.tool_call_id) for e in events if e.type.value == "TOOL_CALL_START"
    ]
    assert starts == [
        (None, "1"),  # draft
        (None, "2"),  # review
        ("review#2", "review#2/1"),  # legal, in the nested workflow's session
        ("review#2", "review#2/2"),  # tech
        ("review#2/legal#1", "review#2/legal#1/w1"),  # legal's write
    ]
    opened = {
        e.subagent_run_id: e.parent_tool_call_id
        for e in events
        if e.type.value == "SUBAGENT_STARTED"
    }
    assert opened == {
        "review#2": "2",
        "review#2/legal#1": "review#2/1",
        "review#2/tech#2": "review#2/2",
    }
    assert events[-1].outcome.type == "interrupt"
