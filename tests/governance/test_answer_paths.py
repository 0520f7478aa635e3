"""Every way of answering goes through the one decision path with a Transform ahead of the
Confirm: the worker, the CLI and the HTTP API (agent.resume and ``tether mcp serve``:
test_decide.py and tests/mcp/test_serve_decisions.py). Each runs the edit over the
transformed call, refuses an edit the policy would rewrite (nothing recorded), and the
record names what ran and who decided."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from deploy_app import SECRET, deploy_agent, ran
from live_server import call, live_server
from ops_cli import cli

from tether.durable import MemoryStore, SQLiteStore
from tether.ops.server import create_app
from tether.ops.worker import Worker

SUPPORT = Path(__file__).parents[1] / "support"
RAN_WITH = {"env": "staging", "replicas": 2, "api_token": SECRET}


@pytest.fixture
def db(tmp_path, monkeypatch) -> str:
    monkeypatch.setenv("DEPLOY_LOG", str(tmp_path / "deploys.jsonl"))
    monkeypatch.setenv("DEPLOY_DB", str(tmp_path / "deploy.db"))
    monkeypatch.syspath_prepend(str(SUPPORT))
    return str(tmp_path / "deploy.db")


async def _suspend(db: str, session: str) -> str:
    store = SQLiteStore(db)
    agent = deploy_agent(store, session)
    assert (await agent.invoke_async("ship it")).stop_reason == "interrupt"
    agent.close()
    [row] = await store.approvals.pending(session_id=session)
    assert row.arguments["env"] == "staging"
    await store.close()
    return row.id


async def _work(db: str) -> list[object]:
    store = SQLiteStore(db)
    outcomes = await Worker(store, lambda session_id: deploy_agent(store, session_id)).run(
        once=True
    )
    await store.close()
    return outcomes


def _decided(db: str, session: str) -> list[dict]:
    async def read() -> list[dict]:
        store = SQLiteStore(db)
        rows = [a.to_dict() for a in await store.approvals.find(session_id=session)]
        audit = [r.data for r in await store.audit.records(session_id=session)
                 if r.event == "approval.decided"]  # fmt: skip
        report = await store.audit.verify()
        await store.close()
        assert report.ok, report
        return [{**row, "audit": audit} for row in rows]

    return asyncio.run(read())


def test_the_worker_runs_an_inbox_edit_over_the_transformed_call(db):
    approval = asyncio.run(_suspend(db, "w-edit"))

    async def decide() -> None:
        store = SQLiteStore(db)
        await store.approvals.decide(
            approval, "approve", decided_by="alice", edited_args={"replicas": 2}
        )
        await store.close()

    asyncio.run(decide())
    asyncio.run(_work(db))
    assert ran(os.environ["DEPLOY_LOG"]) == [RAN_WITH]
    [row] = _decided(db, "w-edit")
    assert (row["status"], row["decided_by"], row["edited_args"]) == (
        "approved",
        "alice",
        {"replicas": 2},
    )
    assert [a["decided_by"] for a in row["audit"]] == ["alice"]


def test_the_worker_refuses_an_edit_recorded_outside_the_policy(db):
    """Without ``validate`` the store cannot know the policy; the resume refuses the edit
    and nothing runs (the CLI and the server need --app for edits)."""
    approval = asyncio.run(_suspend(db, "w-outside"))

    async def decide() -> None:
        store = SQLiteStore(db)
        await store.approvals.decide(
            approval, "approve", decided_by="mallory", edited_args={"env": "prod"}
        )
        await store.close()

    asyncio.run(decide())
    [outcome] = asyncio.run(_work(db))
    assert "policy 'PinStaging' would rewrite field 'env'" in str(outcome)
    assert ran(os.environ["DEPLOY_LOG"]) == []


def test_the_cli_refuses_an_edit_the_policy_would_rewrite_and_runs_the_one_it_allows(db):
    approval = asyncio.run(_suspend(db, "c-edit"))
    app = ["--app", "deploy_app:factory", "--store", db]
    refused = cli(
        "approvals", "approve", approval, "--edit", '{"env": "prod"}', "--as", "bob", *app
    )
    assert refused.exit_code == 1
    assert "policy 'PinStaging' would rewrite field 'env'" in refused.output
    assert _decided(db, "c-edit")[0]["status"] == "pending"  # nothing recorded
    shown = cli("approvals", "show", approval, "--json", "--store", db)
    assert json.loads(shown.output)["arguments"] == {
        "env": "staging",
        "replicas": 5,
        "api_token": "***",
    }
    ok = cli("approvals", "approve", approval, "--edit", '{"replicas": 2}', "--as", "bob", *app)
    assert ok.exit_code == 0, ok.output
    asyncio.run(_work(db))
    assert ran(os.environ["DEPLOY_LOG"]) == [RAN_WITH]
    [row] = _decided(db, "c-edit")
    assert (row["decision"], row["decided_by"]) == ("approve_edited", "bob")
    late = cli("approvals", "deny", approval, "--as", "carol", "--store", db)
    assert late.exit_code == 1
    assert "already decided" in late.output


async def test_http_refuses_an_edit_the_policy_would_rewrite_and_runs_the_one_it_allows(db):
    approval = await _suspend(db, "h-edit")
    store = SQLiteStore(db)
    token = (await store.approvers.add("dana", ["approve:*"])).token
    app = create_app(
        SQLiteStore(db),
        close_store=True,
        app_factory=lambda session_id: deploy_agent(MemoryStore(), session_id),
    )
    url_of = "{}/api/approvals/" + approval + "/decision"
    with live_server(app) as url:
        prod = {"decision": "approve", "edited_args": {"env": "prod"}}
        status, body = await asyncio.to_thread(call, "POST", url_of.format(url), token, prod)
        assert status == 400, body
        assert "policy 'PinStaging' would rewrite field 'env'" in body["error"]
        assert (await store.approvals.get(approval)).status == "pending"
        fine = {"decision": "approve", "edited_args": {"replicas": 2}}
        status, body = await asyncio.to_thread(call, "POST", url_of.format(url), token, fine)
        assert status == 200, body
        assert body["decided_by"] == "dana"
        await _work(db)
        assert ran(os.environ["DEPLOY_LOG"]) == [RAN_WITH]
        again = {"decision": "deny"}
        status, body = await asyncio.to_thread(call, "POST", url_of.format(url), token, again)
        assert status == 409
    await store.close()


async def test_a_row_whose_interrupt_was_answered_elsewhere_is_refused_by_cli_and_http(db):
    """A row left pending although its interrupt was answered (a journal written before
    every answer decided its row): CLI exit 1, HTTP 409, nothing recorded."""
    approval = await _suspend(db, "stale")
    store = SQLiteStore(db)
    row = await store.approvals.get(approval)
    record = await store.load("stale")
    answered = {"answers": {row.interrupt_id: True}}
    await store.append("stale", record.version, [("interrupt_answered", answered)])
    late = await asyncio.to_thread(cli, "approvals", "deny", approval, "--store", db)
    assert late.exit_code == 1
    assert "is no longer waiting for interrupt" in late.output
    token = (await store.approvers.add("erin", ["approve:*"])).token
    with live_server(create_app(SQLiteStore(db), close_store=True)) as url:
        decision = f"{url}/api/approvals/{approval}/decision"
        status, body = await asyncio.to_thread(call, "POST", decision, token, {"decision": "deny"})
    assert status == 409, body
    assert "is no longer waiting for interrupt" in body["error"]
    assert (await store.approvals.get(approval)).status == "pending"
    await store.close()
