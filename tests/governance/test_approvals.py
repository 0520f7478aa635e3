"""Approvals created by real suspended runs, decided, and resumed in a new Agent object."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from ops_agents import SECRET, delete_agent, transfer_agent

from tether import Agent, ToolContext, tool
from tether.control.audit import ApprovalPolicy
from tether.control.interrupts import Interrupt
from tether.durable import ApprovalConflict, ApprovalNotFound, args_sha256
from tether.governance.masks import redact_secrets
from tether.messages import ToolCall
from tether.models import ScriptedModel


async def test_confirm_suspension_files_a_redacted_approval_and_edited_args_resume(stores):
    store = stores()
    ran: list[dict[str, Any]] = []
    agent = transfer_agent(store, "pay-1", ran)
    result = await agent.invoke_async("pay bob")
    assert result.stop_reason == "interrupt"
    [interrupt] = result.interrupts
    [approval] = await store.approvals.pending()
    assert approval.session_id == "pay-1"
    assert approval.interrupt_id == interrupt.id
    assert approval.source == "intervention"
    assert approval.tool == "transfer"
    assert approval.arguments == {"to": "bob", "amount": 500, "api_token": "***"}
    assert approval.args_sha256 == args_sha256({"to": "bob", "amount": 500, "api_token": SECRET})
    assert SECRET not in json.dumps(approval.to_dict())  # nor in the reason (scrubbed)
    assert approval.reason == "send 500 to bob using ***?"
    assert approval.status == "pending"
    assert approval.on_expiry == "deny"
    assert 86399 < approval.expires_at - approval.requested_at <= 86400
    assert (await store.load("pay-1")).status == "suspended"

    # a second store object (another process) decides; edited args are validated first
    other = stores()
    with pytest.raises(ValueError, match="amount"):
        await other.approvals.decide(
            approval.id,
            "approve",
            decided_by="alice",
            edited_args={"amount": "lots"},
            validate=agent,
        )
    decided = await other.approvals.decide(
        approval.id,
        "approve",
        decided_by="alice",
        note="only 5",
        edited_args={"amount": 5},
        validate=agent,
    )
    assert decided.status == "approved"
    assert decided.decision == "approve_edited"
    assert (await other.load("pay-1")).status == "ready"
    assert await other.approvals.pending() == []

    answers = await other.approvals.answers_for("pay-1")
    assert answers == {
        interrupt.id: {
            "approved": True,
            "args": {"to": "bob", "amount": 5, "api_token": SECRET},
            "reason": "only 5",
        }
    }
    worker = transfer_agent(stores(), "pay-1", ran)
    done = await worker.resume_async(answers)
    assert done.stop_reason == "end_turn"
    assert done.text == "done: sent 5 to bob"
    assert ran == [{"to": "bob", "amount": 5, "api_token": SECRET}]
    assert (await other.load("pay-1")).status == "completed"
    assert await other.approvals.answers_for("pay-1") == {}  # nothing left to answer


async def test_second_decision_is_rejected_naming_the_first(stores):
    store = stores()
    agent = transfer_agent(store, "pay-2", [])
    await agent.invoke_async("pay")
    [approval] = await store.approvals.pending(session_id="pay-2", tool="transfer")
    await store.approvals.decide(approval.id, "deny", decided_by="bob", note="no")
    with pytest.raises(
        ApprovalConflict, match=r"already decided: denied by bob at .*first decision wins"
    ) as err:
        await stores().approvals.decide(approval.id, "approve", decided_by="carol")
    assert err.value.approval.decided_by == "bob"
    assert (await store.approvals.get(approval.id)).decision == "deny"
    with pytest.raises(ApprovalNotFound, match="no approval 'apr_nope'"):
        await store.approvals.get("apr_nope")
    # the denial reaches the model as the reason; the tool never ran
    ran: list[Any] = []
    worker = transfer_agent(stores(), "pay-2", ran)
    done = await worker.resume_async(await store.approvals.answers_for("pay-2"))
    assert done.stop_reason == "end_turn"
    assert ran == []
    assert "no" in worker.messages[2].tool_results[0].content


async def test_concurrent_deciders_in_one_process_exactly_one_wins(stores):
    store = stores()
    await transfer_agent(store, "pay-3", []).invoke_async("pay")
    [approval] = await store.approvals.pending()
    a, b = stores(), stores()
    outcomes = await asyncio.gather(
        a.approvals.decide(approval.id, "approve", decided_by="a"),
        b.approvals.decide(approval.id, "deny", decided_by="b"),
        return_exceptions=True,
    )
    assert sum(isinstance(o, ApprovalConflict) for o in outcomes) == 1
    winner = next(o for o in outcomes if not isinstance(o, BaseException))
    assert (await store.approvals.get(approval.id)).decided_by == winner.decided_by


async def test_tool_interrupt_gets_an_approval_and_its_answer(stores):
    store = stores()
    ran: list[Any] = []
    result = await delete_agent(store, "del-1", ran).invoke_async("clean up")
    assert result.stop_reason == "interrupt"
    [approval] = await store.approvals.pending(session_id="del-1")
    assert (approval.source, approval.name, approval.tool) == ("tool", "approve_delete", "delete")
    assert approval.arguments == {"path": "/tmp/x"}
    with pytest.raises(ValueError, match="only a Confirm before a tool call"):
        await store.approvals.decide(
            approval.id, "approve", decided_by="x", edited_args={"path": "/"}
        )
    await store.approvals.decide(approval.id, "respond", decided_by="ops", response={"ok": "go"})
    answers = await store.approvals.answers_for("del-1")
    assert answers == {approval.interrupt_id: {"ok": "go"}}
    done = await delete_agent(stores(), "del-1", ran).resume_async(answers)
    assert done.stop_reason == "end_turn"
    assert ran == [{"ok": "go"}]


class Crash(BaseException):
    """Stands in for the process dying mid-tool (nothing catches it)."""


async def crash(store: Any, session: str) -> None:
    """A run whose non-idempotent tool started (intent saved) and whose process then died."""

    @tool(name="effect")
    async def effect(token: str, ctx: ToolContext) -> str:
        """A side effect."""
        raise Crash

    agent = Agent(
        model=ScriptedModel([{"tool_calls": [{"name": "effect", "args": {"token": SECRET}}]}]),
        tools=[effect],
        store=store,
        session_id=session,
    )
    with pytest.raises(Crash):
        await agent.invoke_async("go")


@pytest.mark.parametrize(
    ("decision", "effects", "stop"), [("approve", 1, "end_turn"), ("deny", 0, "cancelled")]
)
async def test_in_doubt_after_a_crash_becomes_an_approval(stores, decision, effects, stop):
    store = stores()
    await crash(store, "doubt")
    runs: list[str] = []

    @tool(name="effect")
    def effect(token: str = "") -> str:
        """A side effect."""
        runs.append("ran")
        return "ok"

    def recovered() -> Agent:
        return Agent(
            model=ScriptedModel(["finished"]), tools=[effect], store=stores(), session_id="doubt"
        )

    asked = await recovered().resume_async()
    assert asked.stop_reason == "interrupt"
    [approval] = await store.approvals.pending(session_id="doubt")
    assert approval.source == "in_doubt"
    assert approval.tool == "effect"
    assert approval.arguments == {"token": "***"}
    assert "retry" in approval.reason
    again = await recovered().resume_async()  # asking again files no second approval
    assert again.stop_reason == "interrupt"
    assert [a.id for a in await store.approvals.pending()] == [approval.id]
    await store.approvals.decide(approval.id, decision, decided_by="ops")  # type: ignore[arg-type]
    answers = await store.approvals.answers_for("doubt")
    assert answers == {approval.interrupt_id: "retry" if decision == "approve" else "abort"}
    done = await recovered().resume_async(answers)
    assert done.stop_reason == stop
    assert len(runs) == effects


async def test_expiry_resolves_by_its_action_and_marks_the_session_ready(stores):
    store = stores()
    ran: list[dict[str, Any]] = []
    # a ttl far longer than the runs take, and a clock moved past it: no timing race
    await transfer_agent(store, "exp-deny", ran, approvals=ApprovalPolicy(ttl=30)).invoke_async(
        "pay"
    )
    await transfer_agent(
        store, "exp-ok", ran, approvals=ApprovalPolicy(ttl=30, on_expiry="approve")
    ).invoke_async("pay")
    await transfer_agent(store, "no-exp", ran, approvals=ApprovalPolicy(ttl=None)).invoke_async(
        "pay"
    )
    assert await store.approvals.expire_due() == []
    expired = await store.approvals.expire_due(now=time.time() + 60)
    assert sorted((a.session_id, a.status, a.decision, a.decided_by) for a in expired) == [
        ("exp-deny", "expired", "deny", "expiry"),
        ("exp-ok", "expired", "approve", "expiry"),
    ]
    [left] = await store.approvals.pending()
    assert left.session_id == "no-exp"
    assert left.expires_at is None
    assert (await store.load("exp-ok")).status == "ready"
    assert (await store.load("no-exp")).status == "suspended"
    done = await transfer_agent(stores(), "exp-ok", ran).resume_async(
        await store.approvals.answers_for("exp-ok")
    )
    assert done.text == "done: sent 500 to bob"
    denied = await store.approvals.answers_for("exp-deny")
    assert list(denied.values()) == [{"approved": False, "reason": "denied by expiry"}]


async def test_deciding_an_overdue_approval_loses_to_its_expiry(stores):
    store = stores()
    await transfer_agent(store, "late", [], approvals=ApprovalPolicy(ttl=0.01)).invoke_async("pay")
    [approval] = await store.approvals.pending()
    await asyncio.sleep(0.05)
    with pytest.raises(ApprovalConflict, match="expired by expiry"):
        await store.approvals.decide(approval.id, "approve", decided_by="slow")
    assert (await store.approvals.get(approval.id)).status == "expired"


async def test_request_is_idempotent_per_session_and_interrupt(stores):
    store = stores()
    await store.create("s")
    call = ToolCall("c1", "send", {"password": "hunter22", "nested": [{"Authorization": "x"}]})
    interrupt = Interrupt("int_1", "confirm:x", "ok?", "intervention", "before_tool_call", call)
    first = await store.approvals.request("s", interrupt)
    second = await stores().approvals.request("s", interrupt)
    assert first.id == second.id
    assert first.arguments == {"password": "***", "nested": [{"Authorization": "***"}]}
    await store.approvals.decide(first.id, "approve", decided_by="a")
    third = await store.approvals.request("s", interrupt)  # raised again later: a new request
    assert third.id != first.id
    assert [a.id for a in await store.approvals.find(session_id="s")] == [first.id, third.id]


def test_custom_redactor_on_the_agent():
    from tether.durable import MemoryStore

    store = MemoryStore()

    def hide_amount(tool_name: str | None, args: dict[str, Any]) -> dict[str, Any]:
        return {**redact_secrets(tool_name, args), "amount": "<hidden>"}

    transfer_agent(store, "r", [], approvals=ApprovalPolicy(redactor=hide_amount))("pay")
    [approval] = asyncio.run(store.approvals.pending())
    assert approval.arguments == {"to": "bob", "amount": "<hidden>", "api_token": "***"}


async def test_pending_filters_by_session_tool_and_age(stores):
    store = stores()
    await transfer_agent(store, "f1", []).invoke_async("pay")
    await delete_agent(store, "f2", []).invoke_async("rm")
    assert {a.session_id for a in await store.approvals.pending()} == {"f1", "f2"}
    assert [a.session_id for a in await store.approvals.pending(tool="delete")] == ["f2"]
    assert [a.tool for a in await store.approvals.pending(session_id="f1")] == ["transfer"]
    assert await store.approvals.pending(older_than=3600) == []
    assert len(await store.approvals.pending(older_than=0)) == 2
