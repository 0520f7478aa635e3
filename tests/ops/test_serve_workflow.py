"""A factory may return a workflow: every host gets its ``wf.agent`` through the one loader
(``tether.ops.app_loader``), and no host calls an app's factory itself.

Here: ``tether worker`` (``--once`` in process, and a long-running subprocess) and
``tether serve --app`` (the inbox lists the workflow's session and the branch's nested
approval; an edit is validated against the branch's own tool; a decision by the API is
resumed by the worker). The app: tests/support/workflow_app.py.
"""

from __future__ import annotations

import ast
import asyncio
import re
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

import pytest
from live_server import call, live_server
from ops_cli import cli
from worker_testing import TETHER, env, lines, stop, wait_for, workers
from workflow_app import ADDRESS, workflow_factory

from tether import Agent
from tether.durable import SQLiteStore
from tether.errors import ConfigurationError
from tether.models import ScriptedModel
from tether.ops.app_loader import AppFactory, load_factory
from tether.ops.server import create_app
from tether.workflows import Workflow

SRC = Path(__file__).resolve().parents[2] / "src" / "tether"
APP = "workflow_app:workflow_factory"
SESSION = "wf-serve"

# Calls of a name like *factory* that are not an app's factory: the SDK's client factory,
# a sub-agent tool's child factory (as_tool(factory)), the store rules' lazy factory.
NOT_APP_FACTORIES = {"load_factory", "AppFactory", "ClientFactory"}
OTHER_FACTORIES = {("agents/subagent.py", "_factory"), ("durable/rules.py", "_factory")}


def _name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def test_no_host_calls_an_app_factory_itself() -> None:
    """Every host holds an AppFactory and asks it to ``build``: a call of a factory (or one
    handed to a thread) anywhere but the loader would bypass the workflow rule."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        where = path.relative_to(SRC).as_posix()
        if where == "ops/app_loader.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            called = _name(node.func)
            handed = [_name(a) for a in node.args[:1]] if called in ("to_thread", "partial") else []
            for name in [called, *handed]:
                if name is None or not re.search("factory", name, re.IGNORECASE):
                    continue
                if name not in NOT_APP_FACTORIES and (where, name) not in OTHER_FACTORIES:
                    found.append(f"{where}:{node.lineno} {name}")
    assert found == []


def test_the_loader_takes_a_workflow_to_its_agent_and_refuses_anything_else() -> None:
    factory = load_factory(APP)
    agent = factory.build(SESSION)
    assert isinstance(agent, Agent)
    assert agent.session_id == SESSION
    assert [t.name for t in agent.tools] == ["draft", "review", "summary"]  # its nodes
    assert AppFactory.of(factory) is factory
    wrapped = AppFactory.of(lambda session_id: Agent(ScriptedModel(["hi"]), session_id=session_id))
    assert wrapped.build("s").session_id == "s"
    wrong = (
        "workflow_app:returns_a_string returned str, not an Agent or a Workflow for session 's-9'"
    )
    with pytest.raises(ConfigurationError, match=re.escape(wrong)):
        load_factory("workflow_app:returns_a_string").build("s-9")
    early = "workflow_app:not_an_app is annotated to return str, not an Agent or a Workflow"
    with pytest.raises(ConfigurationError, match=re.escape(early)):
        load_factory("workflow_app:not_an_app")
    assert isinstance(workflow_factory(SESSION), Workflow)


async def _suspend(db: Path, out: Path) -> None:
    """The workflow's first run: the legal branch's write waits in the inbox."""
    store = SQLiteStore(db)
    result = await workflow_factory(SESSION, store).invoke_async("the plan")
    assert result.stop_reason == "interrupt"
    assert [i.name for i in result.interrupts] == [ADDRESS]
    await store.close()
    assert lines(out) == []


async def _pending(db: Path) -> list[Any]:
    store = SQLiteStore(db)
    try:
        return await store.approvals.pending(session_id=SESSION)
    finally:
        await store.close()


async def _status(db: Path) -> str:
    store = SQLiteStore(db)
    try:
        return {s.session_id: s.status for s in await store.list_sessions()}[SESSION]
    finally:
        await store.close()


async def test_tether_worker_once_finishes_the_workflow_the_cli_approved(tmp_path: Path) -> None:
    db, out = tmp_path / "t.db", tmp_path / "out.txt"
    await _suspend(db, out)
    [row] = await _pending(db)
    assert row.name == ADDRESS
    approve = ["approvals", "approve", row.id, "--as", "alice", "--store", str(db), "--app", APP]
    # approvals_actions builds the workflow's agent and finds legal's write at its path
    refused = await asyncio.to_thread(cli, *approve, "--edit", '{"text": 5}')
    assert refused.exit_code == 1, refused.output
    assert "edited arguments for tool 'write' are invalid" in " ".join(refused.output.split())
    assert [a.status for a in await _pending(db)] == ["pending"]  # nothing recorded
    approved = await asyncio.to_thread(cli, *approve, "--edit", '{"text": "legal, by cli"}')
    assert approved.exit_code == 0, approved.output
    done = await asyncio.to_thread(
        subprocess.run,
        [TETHER, "worker", "--app", APP, "--store", str(db), "--once"],
        env=env(str(db), out, TETHER_WORKFLOW_OUT=str(out), TETHER_WORKFLOW_STORE=str(db)),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{SESSION} completed" in done.stdout
    assert "workflow_app:workflow_factory" in done.stdout  # the app, named by its spec
    assert lines(out) == [f"{SESSION} legal, by cli"]  # the edited call, once
    assert await _status(db) == "completed"


async def test_serve_lists_the_nested_approval_validates_the_branch_edit_and_a_worker_resumes(
    tmp_path: Path,
) -> None:
    db, out, logs = tmp_path / "t.db", tmp_path / "out.txt", tmp_path
    await _suspend(db, out)
    store = SQLiteStore(db)
    token = (await store.approvers.add("alice", ["approve:*", "viewer"])).token
    await store.close()
    app = create_app(SQLiteStore(db), app_factory=load_factory(APP), close_store=True)
    environ = env(str(db), out, TETHER_WORKFLOW_OUT=str(out), TETHER_WORKFLOW_STORE=str(db))
    cmd = [TETHER, "worker", "--app", APP, "--store", str(db), "--poll", "0.1"]
    with live_server(app) as url, workers([cmd], environ, logs) as [worker]:
        status, listed = await asyncio.to_thread(call, "GET", f"{url}/api/sessions", token)
        assert status == 200, listed
        [row] = [s for s in listed["sessions"] if s["session_id"] == SESSION]
        assert row["status"] == "suspended"
        status, shown = await asyncio.to_thread(
            call, "GET", f"{url}/api/sessions/{quote(SESSION)}", token
        )
        assert status == 200, shown
        [waiting] = shown["waiting_for"]  # the nested interrupt, by its address
        assert waiting["name"] == ADDRESS
        assert waiting["tool_call"]["name"] == "write"
        assert waiting["tool_call"]["arguments"] == {"text": "legal"}
        status, inbox = await asyncio.to_thread(call, "GET", f"{url}/api/approvals", token)
        [approval] = [a for a in inbox["approvals"] if a["session_id"] == SESSION]
        assert approval["name"] == ADDRESS
        assert approval["tool"] == "write"
        decision = f"{url}/api/approvals/{approval['id']}/decision"

        # the branch's tool (legal's write) checks the edit: an int is not its str
        bad = {"decision": "approve", "edited_args": {"text": 5}}
        status, refused = await asyncio.to_thread(call, "POST", decision, token, bad)
        assert status == 400, refused
        assert "edited arguments for tool 'write' are invalid" in refused["error"]
        assert [a.status for a in await _pending(db)] == ["pending"]  # nothing recorded
        good = {"decision": "approve", "edited_args": {"text": "legal, edited"}}
        status, decided = await asyncio.to_thread(call, "POST", decision, token, good)
        assert status == 200, decided

        async def finished() -> bool:
            return await _status(db) == "completed"

        await wait_for(finished, 60, "the worker to finish the workflow")
        assert stop(worker) == 0
    assert lines(out) == [f"{SESSION} legal, edited"]
    log = (logs / "worker0.log").read_text()
    assert f"{SESSION} completed" in log


async def test_a_factory_of_neither_is_refused_at_start_and_when_it_builds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fresh = tmp_path / "never.db"
    for command in (["worker", "--once"], ["serve"]):
        refused = await asyncio.to_thread(
            cli, *command, "--app", "workflow_app:not_an_app", "--store", str(fresh)
        )
        assert refused.exit_code == 2, refused.output
        assert "annotated to return str, not an Agent or a Workflow" in refused.output
    assert not fresh.exists()  # nothing created: the store is opened after --app

    db, out = tmp_path / "t.db", tmp_path / "out.txt"
    monkeypatch.setenv("TETHER_WORKFLOW_OUT", str(out))
    await _suspend(db, out)
    [row] = await _pending(db)
    approved = await asyncio.to_thread(cli, "approvals", "approve", row.id, "--store", str(db))
    assert approved.exit_code == 0, approved.output
    done = await asyncio.to_thread(
        cli, "worker", "--app", "workflow_app:returns_a_string", "--store", str(db), "--once"
    )
    assert done.exit_code == 1, done.output
    assert (
        f"workflow_app:returns_a_string returned str, not an Agent or a Workflow for session "
        f"'{SESSION}'" in " ".join(done.output.split())
    )
    assert await _status(db) == "ready"  # the decided session waits for a worker, unchanged
    store = SQLiteStore(db)
    assert (await store.approvals.get(row.id)).status == "approved"
    assert await store.approvals.answers_for(SESSION)
    await store.close()
    assert lines(out) == []
    store = SQLiteStore(db)
    finished = await workflow_factory(SESSION, store).agent.resume_async(
        await store.approvals.answers_for(SESSION)
    )
    await store.close()
    assert finished.stop_reason == "end_turn"
    assert finished.text.startswith("summary: ")
    assert lines(out) == [f"{SESSION} legal"]


def test_an_async_factory_where_a_host_builds_in_sync_is_refused_without_a_warning() -> None:
    import warnings

    async def make(session_id: str) -> Agent:
        return Agent(ScriptedModel(["hi"]), session_id=session_id)

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "coroutine was never awaited"
        with pytest.raises(ConfigurationError, match="returned coroutine, not an Agent"):
            AppFactory.of(make, "app:make").build("s-1")


def test_a_clone_of_a_workflows_agent_keeps_its_rules() -> None:
    """Hosts clone the agent they build (evals with their own store, Temporal's tree): the
    clone still counts only the nodes' model calls and mirrors the shared state."""
    from tether.durable import MemoryStore

    def run(agent: Agent) -> tuple[int, str]:
        first = agent.run("the plan")
        done = agent.resume({i.id: "approve" for i in first.interrupts})
        return first.usage.model_calls + done.usage.model_calls, done.stop_reason

    built = load_factory(APP).build("wf-a")
    twin = built.clone(store=MemoryStore(), session_id="wf-b")
    assert run(twin) == run(built) == (4, "end_turn")  # legal 2, tech 1, summary 1
