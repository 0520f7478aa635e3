"""The names that moved to tether.governance stay importable from their old paths for one
release, each with a DeprecationWarning naming the new path, and are the same objects."""

from __future__ import annotations

import asyncio
import importlib

import pytest
from ops_agents import transfer_agent

import tether.durable.rules as rules
from tether.durable import MemoryStore, StoreError
from tether.governance import approvals, edits, masks, redaction, redaction_tree, session_prompt

MOVED = [
    ("tether.durable.redaction", "show_session", redaction),
    ("tether.durable.redaction", "show_messages", redaction),
    ("tether.durable.redaction", "ShownSession", redaction),
    ("tether.durable.redaction", "EditedCall", redaction),
    ("tether.durable.redaction", "tree_masks", redaction),
    ("tether.durable.redaction", "redact_approval", redaction),
    ("tether.durable.redaction", "redactor_of", redaction),
    ("tether.durable.redaction", "redact_text", masks),
    ("tether.durable.redaction", "Masker", masks),
    ("tether.durable.redaction", "shown_arguments", masks),
    ("tether.durable.redaction", "provider_text", masks),
    ("tether.durable.redaction", "MASK", masks),
    ("tether.durable.redaction_tree", "tree_sessions", redaction_tree),
    ("tether.durable.redaction_tree", "load_tree_masks", redaction_tree),
    ("tether.durable.session_prompt", "shown_prompt", session_prompt),
    ("tether.durable.approvals", "prepare_request", approvals),
    ("tether.durable.approvals", "shown_interrupt", approvals),
    ("tether.durable.approvals", "redact_secrets", masks),
    ("tether.durable.approval_types", "redact_secrets", masks),
    ("tether.durable.approval_types", "MASK", masks),
    ("tether.durable", "redact_secrets", masks),
    ("tether.agents.edits", "check_edit", edits),
    ("tether.agents.edits", "agent_at", edits),
    ("tether.agents.edits", "tool_at", edits),
]


@pytest.mark.parametrize(("old", "name", "new"), MOVED)
def test_an_old_path_warns_and_gives_the_moved_object(old: str, name: str, new: object) -> None:
    module = importlib.import_module(old)
    with pytest.warns(DeprecationWarning, match=rf"{old}\.{name} moved to {new.__name__}"):  # type: ignore[attr-defined]
        value = getattr(module, name)
    assert value is getattr(new, name)


@pytest.mark.parametrize(
    "old",
    [
        "tether.durable.redaction",
        "tether.durable.redaction_tree",
        "tether.durable.session_prompt",
        "tether.durable.approvals",
        "tether.durable.approval_types",
        "tether.agents.edits",
    ],
)
def test_an_unknown_name_on_an_old_path_is_an_attribute_error(old: str) -> None:
    with pytest.raises(AttributeError, match=f"module '{old}' has no attribute 'nope'"):
        _ = importlib.import_module(old).nope


def test_every_store_has_the_governance_rules_from_import_tether() -> None:
    assert isinstance(rules.installed(), approvals.Rules)


def test_without_installed_rules_a_decision_is_refused_and_nothing_recorded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = MemoryStore()
    transfer_agent(store, "s", [])("pay")
    [row] = asyncio.run(store.approvals.pending())
    monkeypatch.setattr(rules, "_installed", None)
    with pytest.raises(StoreError, match="no governance rules are installed") as raised:
        asyncio.run(store.approvals.decide(row.id, "approve", decided_by="alice"))
    assert "tether.durable.rules.install" in str(raised.value)
    monkeypatch.undo()
    assert [a.status for a in asyncio.run(store.approvals.find(session_id="s"))] == ["pending"]
