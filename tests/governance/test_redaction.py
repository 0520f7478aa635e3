"""The one redaction path (tether.governance.redaction) on every store: rows never hold a
secret (filed or edited), and a session view shows what its approvals show."""

from __future__ import annotations

from typing import Any

import pytest
from ops_agents import SECRET, transfer_agent
from redacting_agents import ACCOUNT, PAYEE, hide_payee, redacting_agent

from tether.governance.masks import shown_arguments
from tether.governance.redaction import show_session
from tether.session import fold


def test_the_default_mask_applies_on_top_of_a_custom_redactor() -> None:
    real = {"to": PAYEE, "amount": 5, "api_token": SECRET, "nested": {"password": "hunter22"}}
    shown = shown_arguments("transfer", real, hide_payee)
    assert shown == {
        "to": "***",
        "amount": "***",
        "api_token": "***",
        "nested": {"password": "***"},
    }
    assert real["api_token"] == SECRET  # never mutated


async def test_a_row_filed_through_a_custom_redactor_holds_no_secret(stores) -> None:
    store = stores()
    await redacting_agent(store, "r", []).invoke_async("pay")
    [row] = await store.approvals.pending()
    assert row.arguments == {"to": "***", "amount": "***", "api_token": "***"}
    assert SECRET not in str(row.to_dict())
    assert PAYEE not in str(row.reason)


async def test_edits_of_masked_values_are_refused_and_unchanged_masks_dropped(stores) -> None:
    store = stores()
    await transfer_agent(store, "e", []).invoke_async("pay")
    [row] = await store.approvals.pending()
    for edit in ({"api_token": "sk-typed-in-0000"}, {"amount": 3, "headers": {"Cookie": "c=1"}}):
        with pytest.raises(ValueError, match="edited arguments may not set") as refused:
            await store.approvals.decide(row.id, "approve", decided_by="a", edited_args=edit)
        assert "secrets are never stored in the approvals table" in str(refused.value)
    assert (await store.approvals.get(row.id)).status == "pending"  # nothing was written
    decided = await store.approvals.decide(
        row.id,
        "approve",
        decided_by="a",
        edited_args={"api_token": "***", "to": "bob", "amount": 2},
    )
    assert decided.edited_args == {"amount": 2}  # as shown: dropped, the real values stay
    assert decided.decision == "approve_edited"
    ran: list[dict[str, Any]] = []
    answers = await store.approvals.answers_for("e")
    await transfer_agent(stores(), "e", ran).resume_async(answers)
    assert ran == [{"to": "bob", "amount": 2, "api_token": SECRET}]


async def test_an_edit_equal_to_what_was_shown_is_a_plain_approval(stores) -> None:
    store = stores()
    await transfer_agent(store, "p", []).invoke_async("pay")
    [row] = await store.approvals.pending()
    decided = await store.approvals.decide(
        row.id, "approve", decided_by="a", edited_args=dict(row.arguments)
    )
    assert decided.decision == "approve"
    assert decided.edited_args is None


async def test_the_session_view_learns_the_masks_of_its_approval_rows(stores) -> None:
    store = stores()
    await redacting_agent(store, "v", []).invoke_async("pay")
    record = await store.load("v")
    assert record is not None
    approvals = await store.approvals.find(session_id="v")
    shown = show_session(record, fold(record), approvals)
    text = str([m.to_dict() for m in shown.view.messages]) + str(shown.view.interrupts)
    assert PAYEE not in text
    assert SECRET not in text
    assert ACCOUNT in text  # lookup never asked a human: only the redactor itself masks it
    with_redactor = show_session(record, fold(record), approvals, redactor=hide_payee)
    assert ACCOUNT not in str([m.to_dict() for m in with_redactor.view.messages])
    raw = show_session(record, fold(record), approvals, unredacted=True)
    assert SECRET in str([m.to_dict() for m in raw.view.messages])
    assert not raw.redacted


def test_show_messages_masks_arguments_and_scrubs_the_hidden_values_everywhere() -> None:
    """The path traces take (tether.observe content capture)."""
    from tether.governance.redaction import show_messages
    from tether.messages import Message, TextBlock, ToolCall, ToolResult

    secret = "s3cr3t-value-123"
    call = ToolCall("c1", "login", {"user": "ann", "api_token": secret})
    messages = [
        Message("assistant", [TextBlock(f"using {secret}"), call]),
        Message("tool", [ToolResult("c1", "login", f"logged in with {secret}")]),
    ]
    shown = show_messages(messages, redactor=lambda tool, args: {**args, "user": "***"})
    assert secret not in repr(shown)
    assert shown[0].tool_calls[0].arguments["user"] == "***"
    assert messages[0].tool_calls[0].arguments["api_token"] == secret  # the input is untouched
