"""A sub-agent's (or a workflow node agent's) own ``approvals=`` policy applies to the
inbox row of an interrupt raised in it, on top of the top agent's: its redactor's masks
add up with the top's (none can be escaped), its shorter ``ttl`` and ``deny`` on expiry
win, and an edit of a key the row shows masked is refused (tests/support/quoting_tree.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from quoting_tree import CARD, PLAIN, inner_flow, inner_tree

from tether.governance.redaction import show_session, tree_masks
from tether.governance.redaction_tree import tree_sessions
from tether.session import fold


@pytest.mark.parametrize("build", [inner_tree, inner_flow], ids=["as_tool", "workflow_node"])
async def test_the_inner_agents_redactor_and_ttl_file_the_row(stores: Any, build: Any) -> None:
    store = stores()
    result = await build(store, "top").invoke_async("go")
    assert result.stop_reason == "interrupt"
    [row] = await stores().approvals.pending()  # read back as another process would
    assert row.session_id == "top"  # filed at the top, lifted
    assert row.tool == "charge"
    assert row.arguments == {"card": "***", "memo": PLAIN, "cvv": "***"}
    assert CARD not in json.dumps(row.to_dict())
    assert row.expires_at is not None
    assert row.expires_at - row.requested_at == pytest.approx(60.0)  # the inner's ttl
    assert row.on_expiry == "deny"
    # the views learn the row's mask: the inner call is masked without knowing the redactor
    sessions = await tree_sessions(store, "top")
    tree = tree_masks(sessions)
    for record, approvals in sessions:
        shown = show_session(record, fold(record), approvals, tree=tree)
        text = json.dumps([m.to_dict() for m in shown.view.messages])
        text += json.dumps([i.to_dict() for i in shown.view.interrupts])
        assert CARD not in text, record.session_id


async def test_an_edit_of_a_key_the_inner_policy_masks_is_refused(stores: Any) -> None:
    store = stores()
    await inner_tree(store, "top").invoke_async("go")
    [row] = await store.approvals.pending()
    with pytest.raises(ValueError, match="edited arguments may not set 'card'"):
        await store.approvals.decide(
            row.id, "approve", decided_by="a", edited_args={"card": "5555-0000-1111-2222"}
        )
    assert (await stores().approvals.get(row.id)).status == "pending"  # nothing was written
    decided = await store.approvals.decide(
        row.id, "approve", decided_by="a", edited_args={"card": "***", "memo": "tea"}
    )
    assert decided.edited_args == {"memo": "tea"}
