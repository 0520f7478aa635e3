"""Who may call the server: bearer tokens, read access and the approval policy.

Every API request carries ``Authorization: Bearer tether_<key id>_<secret>`` (issued by
``tether approvers add NAME --role R``); the token is checked by
``store.approvers.verify`` (only a hash is stored, compared in constant time). No
valid token: 401. A valid token whose roles do not allow the route: 403.

Roles (the default policy; pass ``create_app(policy=...)`` to decide approvals your way):

* ``approve:PATTERN`` - read the inbox and sessions, and decide approvals whose tool
  name matches the glob ``PATTERN`` (``approve:*`` everything, ``approve:delete_*``
  the delete tools). An approval without a tool (a hook interrupt) is matched by
  ``interrupt:NAME``, so ``approve:interrupt:*`` covers those.
* ``viewer`` - read the inbox and sessions, decide nothing; no audit log.
* ``auditor`` - read the audit log (``/api/audit``, ``/api/audit/verify``,
  ``/api/audit/export``) and the sessions it is about (list, transcripts, timelines,
  updates); not the approvals inbox.
* ``invoke`` - call the served agent over A2A (``/a2a``): start tasks, read, continue
  and cancel its own; answer its tasks' questions, not their approvals (tether.a2a).
* ``admin`` - all of the above, every approval.

Access levels: ``read`` (the inbox: approvals), ``sessions`` (sessions, timelines,
updates, ``/api/me``, the OpenAPI document: every known role), ``audit``, ``invoke``
(A2A: the handler decides per task) and ``run`` (AG-UI: ``invoke`` or ``admin``).

Any other role grants nothing. Tokens are never logged or echoed. A store that fails
while a token is checked gives 503 without any detail (the detail goes to the log).
"""

from __future__ import annotations

import fnmatch
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Final, Literal

from starlette.exceptions import HTTPException

from tether.durable.errors import StoreBusy, StoreError

if TYPE_CHECKING:
    from starlette.requests import Request

    from tether.durable import Approval
    from tether.durable.approvers import Approver
    from tether.ops.server.offload import StoreRunner

log = logging.getLogger("tether.server")

Policy = Callable[["Approver", "Approval"], bool]
"""``policy(approver, approval) -> bool``: may this approver decide this approval?"""
Access = Literal["read", "sessions", "audit", "invoke", "run"]

APPROVE_PREFIX: Final = "approve:"
READ_ROLES: Final = frozenset({"viewer", "admin"})
AUDIT_ROLES: Final = frozenset({"auditor", "admin"})
CHALLENGE: Final = {"WWW-Authenticate": 'Bearer realm="tether"'}


def subject(approval: Approval) -> str:
    """What an ``approve:PATTERN`` role is matched against: the tool name, or
    ``interrupt:NAME`` for an approval that is not about a tool call."""
    return approval.tool if approval.tool is not None else f"interrupt:{approval.name}"


def default_policy(approver: Approver, approval: Approval) -> bool:
    """``admin`` decides everything; ``approve:PATTERN`` decides approvals whose
    :func:`subject` matches the glob (case-sensitive)."""
    target = subject(approval)
    for role in approver.roles:
        if role == "admin":
            return True
        if role.startswith(APPROVE_PREFIX) and fnmatch.fnmatchcase(
            target, role[len(APPROVE_PREFIX) :]
        ):
            return True
    return False


def allowed(approver: Approver, access: Access) -> bool:
    """Inbox, sessions or audit access, from the roles."""
    roles = set(approver.roles)
    if access == "invoke":  # A2A: the handler decides per task what the roles allow
        return "invoke" in roles or allowed(approver, "sessions")
    if access == "run":  # AG-UI: every request runs the agent
        return bool(roles & {"invoke", "admin"})
    if access == "audit":
        return bool(roles & AUDIT_ROLES)
    inbox = bool(roles & READ_ROLES) or any(r.startswith(APPROVE_PREFIX) for r in roles)
    return inbox or (access == "sessions" and bool(roles & AUDIT_ROLES))


def bearer(request: Request) -> str | None:
    """The bearer token of the request, if any (never logged)."""
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


async def authenticate(request: Request, run: StoreRunner, access: Access) -> Approver:
    """The verified approver of the request, or HTTPException 401 / 403 (503: the store
    failed; nothing about it is told to a caller not yet authenticated)."""
    token = bearer(request)
    try:
        approver = None if token is None else await run(run.store.approvers.verify, token)
    except StoreBusy as exc:
        log.warning("store busy while checking a token: %s", exc)
        raise HTTPException(
            503, "the store is busy; retry in a moment", headers={"Retry-After": "1"}
        ) from None
    except StoreError as exc:
        log.error("store failed while checking a token: %s", exc)
        raise HTTPException(
            503, "the store cannot be read; the server log says why", headers={"Retry-After": "5"}
        ) from None
    if approver is None:
        raise HTTPException(
            401,
            "a valid bearer token is required (Authorization: Bearer tether_...); "
            "issue one with: tether approvers add NAME --role ROLE",
            headers=CHALLENGE,
        )
    if not allowed(approver, access):
        need = {
            "audit": "auditor or admin",
            "read": "viewer, approve:PATTERN or admin",
            "sessions": "viewer, approve:PATTERN, auditor or admin",
            "invoke": "invoke, viewer, approve:PATTERN, auditor or admin",
            "run": "invoke or admin",
        }[access]
        raise HTTPException(
            403,
            f"approver {approver.name!r} (roles: {', '.join(approver.roles)}) may not do "
            f"this; it needs the role {need}",
        )
    return approver
