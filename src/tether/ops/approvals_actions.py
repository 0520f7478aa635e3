"""Reading one approval and deciding it from the command line (``approve``, ``deny``,
``respond``): through the one :func:`~tether.governance.decide_approval`, traced."""

from __future__ import annotations

import getpass
import socket
import time
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console

from tether.durable.approval_types import ApprovalNotFound
from tether.ops.app_loader import build_agent
from tether.ops.cli_common import fail, with_store
from tether.ops.decision_trace import trace_decided
from tether.ops.store_url import describe
from tether.ops.terminal import json_line, safe

if TYPE_CHECKING:
    from tether.durable import Approval, Store


async def get_approval(s: Store, approval_id: str, store: str) -> Approval:
    """``s.approvals.get`` whose not-found error keeps ``--store`` in its hint."""
    try:
        return await s.approvals.get(approval_id)
    except ApprovalNotFound:
        fail(
            f"no approval {approval_id!r} in {describe(store)}",
            f"list them with: tether approvals list --all --store {describe(store)}",
        )


def approver_name(name: str | None) -> str:
    """The name recorded with a decision: ``--as``, else ``user@host``."""
    if name:
        return name
    try:
        user = getpass.getuser()
    except Exception:
        user = "unknown"
    return f"{user}@{socket.gethostname()}"


def decide(
    store: str,
    approval_id: str,
    decision: str,
    who: str | None,
    note: str | None,
    edited: dict[str, Any] | None = None,
    response: Any = None,
    app_spec: str | None = None,
    as_json: bool = False,
) -> None:
    """Record ``decision`` on the approval (``edited`` validated against the tool through
    ``app_spec``'s Agent), trace it, and print what became of it (``as_json``: its JSON)."""

    async def work(s: Store) -> Approval:
        current = await get_approval(s, approval_id, store)
        validate = None
        if edited is not None and app_spec is not None:
            validate = build_agent(app_spec, current.session_id)
        started = time.time_ns()
        from tether.governance import decide_approval

        decided = await decide_approval(
            s,
            approval_id,
            decision,  # type: ignore[arg-type]
            decided_by=approver_name(who),
            note=note,
            edited_args=edited,
            response=response,
            agent=validate,
        )
        await trace_decided(s, decided, via="cli", started_ns=started)
        return decided

    try:
        a = with_store(store, work)
    except ValueError as exc:
        fail(str(exc))
    if as_json:
        from tether.governance.redaction import redact_approval

        typer.echo(json_line(redact_approval(a).to_dict()))
        return
    verb = {"approve": "approved", "deny": "denied", "respond": "answered"}[decision]
    extra = " with edited arguments" if edited is not None else ""
    Console(highlight=False).print(
        safe(
            f"{verb} {a.id}{extra} as {a.decided_by}; session {a.session_id} resumes when "
            "nothing else of it is pending (worker, or answers_for + agent.resume)"
        )
    )
