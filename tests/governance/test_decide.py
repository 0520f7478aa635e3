"""The one decision path: an approver's edit never undoes a policy ahead of the Confirm,
every answer decides its approval row, and the record names what runs and who decided."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from deploy_app import SECRET, deploy_agent, ran

from tether import Agent
from tether.control import BeforeToolCall, Deny, InterventionHandler
from tether.durable import ApprovalConflict, SQLiteStore, args_sha256
from tether.errors import AnswerError
from tether.models import ScriptedModel

SUPPORT = Path(__file__).parents[1] / "support"
STAGING = {"env": "staging", "replicas": 5, "api_token": SECRET}


@pytest.fixture
def log(tmp_path, monkeypatch) -> str:
    path = str(tmp_path / "deploys.jsonl")
    monkeypatch.setenv("DEPLOY_LOG", path)
    monkeypatch.setenv("DEPLOY_DB", str(tmp_path / "deploy.db"))
    return path


async def _suspended(store, session: str):
    agent = deploy_agent(store, session)
    result = await agent.invoke_async("ship it")
    assert result.stop_reason == "interrupt"
    [interrupt] = result.interrupts
    return agent, interrupt


async def test_the_row_shows_the_call_after_the_policies_ahead_of_the_confirm(stores, log):
    store = stores()
    agent, interrupt = await _suspended(store, "d-row")
    assert interrupt.tool_call.arguments == STAGING  # what will run, not the model's prod
    [row] = await store.approvals.pending()
    assert row.arguments == {"env": "staging", "replicas": 5, "api_token": "***"}
    assert row.args_sha256 == args_sha256(STAGING)
    assert row.reason == "deploy 5 replicas to staging?"
    agent.close()


def test_an_inbox_edit_merges_over_the_transformed_call_in_a_new_process(tmp_path, log):
    """The issue's reproduction: decide with edited_args={"replicas": 2}, resume elsewhere."""

    async def decide() -> None:
        store = SQLiteStore(os.environ["DEPLOY_DB"])
        agent, _ = await _suspended(store, "d-repro")
        agent.close()
        [row] = await store.approvals.pending()
        decided = await store.approvals.decide(
            row.id, "approve", decided_by="alice", edited_args={"replicas": 2}
        )
        assert decided.edited_args == {"replicas": 2}
        await store.close()

    asyncio.run(decide())
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SUPPORT), *sys.path])}
    out = subprocess.run(
        [sys.executable, str(SUPPORT / "deploy_app.py"), "d-repro"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert out.stdout.strip() == "end_turn done: deployed 2 to staging"
    assert ran(log) == [{"env": "staging", "replicas": 2, "api_token": SECRET}]


async def test_an_edit_a_policy_would_rewrite_is_refused_at_decide_time(stores, log):
    store = stores()
    agent, _ = await _suspended(store, "d-refuse")
    [row] = await store.approvals.pending()
    with pytest.raises(AnswerError, match=r"policy 'PinStaging' would rewrite field 'env'"):
        await store.approvals.decide(
            row.id, "approve", decided_by="alice", edited_args={"env": "prod"}, validate=agent
        )
    assert [a.id for a in await store.approvals.pending()] == [row.id]  # nothing recorded
    audit = [r.event for r in await store.audit.records(session_id="d-refuse")]
    assert "approval.decided" not in audit
    # within the policy, the same approver's edit is accepted and runs as recorded
    await store.approvals.decide(
        row.id, "approve", decided_by="alice", edited_args={"replicas": 2}, validate=agent
    )
    worker = deploy_agent(stores(), "d-refuse")
    done = await worker.resume_async(await store.approvals.answers_for("d-refuse"))
    assert done.text == "done: deployed 2 to staging"
    assert ran(log) == [{"env": "staging", "replicas": 2, "api_token": SECRET}]
    agent.close()
    worker.close()


async def test_a_resume_edit_a_policy_would_rewrite_is_refused_and_nothing_recorded(stores, log):
    store = stores()
    agent, interrupt = await _suspended(store, "d-resume")
    prod = {"approved": True, "args": {**STAGING, "env": "prod", "replicas": 2}}
    with pytest.raises(AnswerError, match=r"policy 'PinStaging' would rewrite field 'env'"):
        await agent.resume_async({interrupt.id: prod})
    assert agent.pending_interrupts == [interrupt]
    [row] = await store.approvals.pending()
    assert row.interrupt_id == interrupt.id
    assert ran(log) == []
    fine = {"approved": True, "args": {**STAGING, "replicas": 2}}
    done = await agent.resume_async({interrupt.id: fine}, decided_by="ops-bot")
    assert done.text == "done: deployed 2 to staging"
    assert ran(log) == [{"env": "staging", "replicas": 2, "api_token": SECRET}]
    [row] = await store.approvals.find(session_id="d-resume")
    assert (row.status, row.decision, row.decided_by) == ("approved", "approve_edited", "ops-bot")
    assert row.edited_args == {"replicas": 2}
    [record] = [r for r in await store.audit.records(session_id="d-resume")
                if r.event == "approval.decided"]  # fmt: skip
    assert record.data["decided_by"] == "ops-bot"
    assert record.data["edited_args_sha256"] == args_sha256({"replicas": 2})
    assert record.data["runs_args_sha256"] == args_sha256({**STAGING, "replicas": 2})
    agent.close()


async def test_a_resume_answer_decides_the_row_and_a_later_inbox_decision_is_refused(stores, log):
    store = stores()
    agent, interrupt = await _suspended(store, "d-plain")
    await agent.resume_async({interrupt.id: True})  # default decided_by: user@host
    assert ran(log) == [STAGING]
    [row] = await store.approvals.find(session_id="d-plain")
    assert row.status == "approved"
    assert row.decided_by.endswith("(agent.resume)")
    with pytest.raises(ApprovalConflict, match="already decided: approved by"):
        await store.approvals.decide(row.id, "deny", decided_by="alice", note="do NOT")
    assert (await store.approvals.get(row.id)).status == "approved"
    agent.close()


async def test_a_row_pending_after_its_answer_was_journaled_is_refused(stores, log):
    """A row left pending by an answer journaled without it (a journal written before
    every answer decided its row) cannot be decided afterwards."""
    from tether.durable import ApprovalStale

    store = stores()
    agent, interrupt = await _suspended(store, "d-stale")
    [row] = await store.approvals.pending()
    await store.append("d-stale", (await store.load("d-stale")).version,
                       [("interrupt_answered", {"answers": {interrupt.id: True}})])  # fmt: skip
    with pytest.raises(ApprovalStale, match="no longer waiting for interrupt"):
        await store.approvals.decide(row.id, "deny", decided_by="alice")
    assert (await store.approvals.get(row.id)).status == "pending"
    agent.close()


async def test_an_answer_against_a_row_decided_otherwise_is_refused(stores, log):
    store = stores()
    agent, interrupt = await _suspended(store, "d-first")
    [row] = await store.approvals.pending()
    await store.approvals.decide(row.id, "deny", decided_by="alice", note="not today")
    with pytest.raises(AnswerError, match="already decided in the approvals inbox"):
        await agent.resume_async({interrupt.id: True})
    assert ran(log) == []
    # the recorded answer resumes (the worker's way)
    done = await agent.resume_async(await store.approvals.answers_for("d-first"))
    assert done.stop_reason == "end_turn"
    assert "not today" in json.dumps(agent.messages[-2].to_dict())
    assert ran(log) == []
    agent.close()


async def test_an_answer_that_agrees_with_the_decided_row_resumes_without_a_new_decision(
    stores, log
):
    store = stores()
    agent, interrupt = await _suspended(store, "d-agree")
    [row] = await store.approvals.pending()
    await store.approvals.decide(row.id, "approve", decided_by="alice")
    done = await agent.resume_async({interrupt.id: "approve"}, decided_by="bob")
    assert done.text == "done: deployed 5 to staging"
    assert (await store.approvals.get(row.id)).decided_by == "alice"  # the first decision
    decided = [r for r in await store.audit.records(session_id="d-agree")
               if r.event == "approval.decided"]  # fmt: skip
    assert [r.data["decided_by"] for r in decided] == ["alice"]
    agent.close()


class CapReplicas(InterventionHandler):
    """Deny more than 5 replicas; a broken policy for 7 (it raises)."""

    def before_tool_call(self, event: BeforeToolCall) -> Deny | None:
        replicas = event.tool_call.arguments.get("replicas")
        if replicas == 7:
            raise RuntimeError("cannot judge 7")
        return Deny("at most 5 replicas") if replicas > 5 else None


async def test_an_edit_a_policy_ahead_would_deny_or_cannot_judge_is_refused(stores, log):
    from deploy_app import AskBeforeDeploy, PinStaging, deploy, script

    store = stores()
    agent = Agent(
        ScriptedModel(script),
        tools=[deploy],
        interventions=[PinStaging(), CapReplicas(), AskBeforeDeploy()],
        store=store,
        session_id="d-deny",
    )
    [interrupt] = (await agent.invoke_async("ship it")).interrupts
    [row] = await store.approvals.pending()
    for replicas, why in ((9, "would not let it run (at most 5 replicas)"), (7, "failed on it")):
        edit = {"approved": True, "args": {**STAGING, "replicas": replicas}}
        with pytest.raises(AnswerError, match=rf"policy 'CapReplicas' {re.escape(why)}"):
            await agent.resume_async({interrupt.id: edit})
        with pytest.raises(AnswerError, match=rf"policy 'CapReplicas' {re.escape(why)}"):
            await store.approvals.decide(
                row.id,
                "approve",
                decided_by="alice",
                edited_args={"replicas": replicas},
                validate=agent,
            )
    assert (await store.approvals.get(row.id)).status == "pending"
    assert ran(log) == []
    agent.close()


async def test_a_resume_edit_of_a_masked_value_is_refused_as_in_the_inbox(stores, log):
    store = stores()
    agent, interrupt = await _suspended(store, "d-secret")
    edit = {"approved": True, "args": {**STAGING, "api_token": "sk-typed-by-hand"}}
    with pytest.raises(AnswerError, match="edited arguments may not set 'api_token'"):
        await agent.resume_async({interrupt.id: edit})
    assert (await store.approvals.pending())[0].interrupt_id == interrupt.id
    assert agent.pending_interrupts == [interrupt]
    assert ran(log) == []
    agent.close()


async def test_the_inbox_front_door_refuses_an_edit_without_the_agent(stores, log):
    from tether.governance import decide_approval

    store = stores()
    agent, _ = await _suspended(store, "d-door")
    [row] = await store.approvals.pending()
    with pytest.raises(AnswerError, match=r"give the app's agent \(--app module:factory\)"):
        await decide_approval(
            store, row.id, "approve", decided_by="alice", edited_args={"replicas": 2}
        )
    assert (await store.approvals.get(row.id)).status == "pending"
    with pytest.raises(AnswerError, match="policy 'PinStaging' would rewrite field 'env'"):
        await decide_approval(
            store, row.id, "approve", decided_by="alice", edited_args={"env": "prod"}, agent=agent
        )
    decided = await decide_approval(
        store, row.id, "approve", decided_by="alice", edited_args={"replicas": 2}, agent=agent
    )
    assert (decided.decision, decided.decided_by) == ("approve_edited", "alice")
    agent.close()
