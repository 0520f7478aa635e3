"""Who may run the agent over AG-UI, and who may answer what it asks.

Callers use the server's bearer tokens (``tether approvers add``). Running (starting or
continuing a thread) needs the role ``invoke`` or ``admin``; a thread is its owner's (who
started it over AG-UI, recorded in the audit log before anything runs): another caller
may only answer the approvals its roles cover on it, and ``admin`` may do anything. Answering an interrupt that
asks a person to approve (a Confirm, a hook's or an in-doubt question) also needs what
the inbox needs: the server policy for its approval row (``approve:PATTERN`` matching the
tool, or ``admin``), so an agent's caller cannot approve what the agent asked to do. A
question a tool asks its user (``clarify``, a tool's ``ctx.interrupt``) and a front-end
tool's result are the caller's to give.
"""

from __future__ import annotations

import fnmatch
import logging
from typing import TYPE_CHECKING, Final

from tether.ops.server.auth import APPROVE_PREFIX, authenticate

if TYPE_CHECKING:
    from starlette.requests import Request

    from tether.control.interrupts import Interrupt
    from tether.durable import Approval
    from tether.durable.approvers import Approver
    from tether.ops.server.auth import Policy
    from tether.ops.server.offload import StoreRunner

log = logging.getLogger("tether.server")


async def invoker(request: Request, run: StoreRunner) -> Approver:
    """The verified caller of the request, allowed to run the agent (``invoke`` or
    ``admin``); the inbox's HTTPException 401 / 403 / 503 otherwise (one check:
    :func:`tether.ops.server.auth.authenticate`)."""
    return await authenticate(request, run, "run")


def may_answer(
    approver: Approver, interrupt: Interrupt, row: Approval | None, policy: Policy
) -> str | None:
    """Why ``approver`` may not answer ``interrupt`` (None: it may)."""
    if interrupt.source == "tool":
        return None  # a question to the caller (clarify), or a front-end tool's result
    if row is not None:
        if policy(approver, row):
            return None
        target = row.tool if row.tool is not None else f"interrupt:{row.name}"
    else:
        call = interrupt.tool_call
        target = call.name if call is not None else f"interrupt:{interrupt.name}"
        for role in approver.roles:
            if role == "admin" or (
                role.startswith(APPROVE_PREFIX)
                and fnmatch.fnmatchcase(target, role[len(APPROVE_PREFIX) :])
            ):
                return None
    return (
        f"approver {approver.name!r} (roles: {', '.join(approver.roles)}) may not answer "
        f"interrupt {interrupt.id} ({target!r}): it needs a role like approve:{target} or "
        "admin, as in the inbox"
    )


OWNER_EVENT: Final = "ag_ui_run"
"""The audit record of each AG-UI run (who ran it); the thread's first one names its owner."""
OWNER_SCAN: Final = 64
"""Audit records of a thread read to find its first run (written before anything runs)."""


async def thread_owner(run: StoreRunner, thread: str) -> str | None:
    """Who started ``thread`` over AG-UI (None: nobody did; it began elsewhere)."""
    records = await run(run.store.audit.records, thread, 0, OWNER_SCAN)
    for record in records:
        if record.event == OWNER_EVENT:
            name = record.data.get("approver")
            return name if isinstance(name, str) else None
    return None


def not_owner(approver: Approver, thread: str, owner: str | None) -> str:
    """The refusal of a caller who is not the thread's owner and asks more than approving."""
    whose = f"was started by {owner!r}" if owner else "was not started over AG-UI"
    return (
        f"thread {thread[:80]!r} {whose}: approver {approver.name!r} may only answer the "
        "approvals its approve:PATTERN roles cover on it (resume entries), not run it"
    )
