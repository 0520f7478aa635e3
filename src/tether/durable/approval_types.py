"""Approval records, their errors, hashing and row mapping (see approvals.py).

What the rows show is redacted by governance (:mod:`tether.governance.masks`) before
they are stored; nothing here masks.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import secrets
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

from tether.durable.errors import StoreError

if TYPE_CHECKING:
    from tether.durable.audit import AuditEvent

ApprovalStatus = Literal["pending", "approved", "denied", "expired"]
ExpiryAction = Literal["deny", "approve"]
Decision = Literal["approve", "deny", "respond"]
Redactor = Callable[[str | None, dict[str, Any]], dict[str, Any]]
"""``redactor(tool_name, arguments) -> arguments as shown to approvers`` (never mutate)."""
Validator = Callable[[str, dict[str, Any]], None]
"""``validator(tool_name, full_arguments)`` raises ValueError when edited arguments are invalid."""

APPROVAL_SOURCES: Final = frozenset({"intervention", "hook", "tool", "in_doubt"})
"""Interrupt sources that ask a human and therefore get an approval row."""
DEFAULT_TTL: Final = 24 * 3600.0


class ApprovalError(StoreError):
    """An approval operation was refused."""


class ApprovalNotFound(ApprovalError, KeyError):
    """No approval with this id."""

    def __init__(self, approval_id: str) -> None:
        self.approval_id = approval_id
        super().__init__(
            f"no approval {approval_id!r} in this store (list them: tether approvals list)"
        )

    def __str__(self) -> str:
        return str(self.args[0])


class ApprovalConflict(ApprovalError):
    """The approval was already decided (first decision wins) or has expired."""

    def __init__(self, approval: Approval) -> None:
        self.approval = approval
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(approval.decided_at or 0))
        super().__init__(
            f"approval {approval.id} was already decided: {approval.status} by "
            f"{approval.decided_by} at {when} (unix {approval.decided_at or 0:.3f}); "
            "the first decision wins and yours was not recorded"
        )


class ApprovalStale(ApprovalConflict):
    """The approval's interrupt was already answered another way (``agent.resume``, an MCP
    host): the row is no longer the question, so deciding it is refused."""

    def __init__(self, approval: Approval) -> None:
        self.approval = approval
        ApprovalError.__init__(
            self,
            f"approval {approval.id}: session {approval.session_id!r} is no longer waiting for "
            f"interrupt {approval.interrupt_id} (it was answered another way: agent.resume, a "
            "worker or an MCP host); your decision was not recorded",
        )


@dataclass(frozen=True, slots=True)
class Approval:
    """One approval request and, once decided, its decision.

    ``arguments`` are the tool arguments *as shown* (through the agent's redactor);
    ``args_sha256`` hashes the real arguments (canonical JSON). ``decision`` is
    ``approve``, ``approve_edited``, ``deny`` or ``respond`` (a free JSON ``response``).
    ``server``: where the tool comes from when it is not a local function (the label of
    the MCP server offering it), else None.
    """

    id: str
    session_id: str
    interrupt_id: str
    source: str
    name: str
    tool: str | None
    arguments: dict[str, Any]
    args_sha256: str | None
    reason: Any
    requested_at: float
    expires_at: float | None
    on_expiry: ExpiryAction
    status: ApprovalStatus = "pending"
    decided_by: str | None = None
    decided_at: float | None = None
    decision: str | None = None
    edited_args: dict[str, Any] | None = None
    response: Any = None
    note: str | None = None
    server: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def canonical(value: Any) -> str:
    """Canonical compact JSON (sorted keys, UTF-8): what hashes are computed over."""
    return json.dumps(
        value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=repr
    )


def args_sha256(arguments: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON of tool arguments."""
    return hashlib.sha256(canonical(arguments).encode()).hexdigest()


def new_approval_id() -> str:
    return "apr_" + secrets.token_hex(10)


def expired_audit(approval: Approval) -> AuditEvent:
    """The audit record of an approval resolved by its expiry action."""
    from tether.durable.audit import AuditEvent

    data = {"approval_id": approval.id, "interrupt_id": approval.interrupt_id}
    data |= {"decision": approval.on_expiry, "decided_by": "expiry"}
    return AuditEvent("approval.expired", data, approval.session_id)


APPROVAL_COLS: Final = (
    "id, session_id, interrupt_id, source, name, tool, arguments, args_sha256, reason, "
    "requested_at, expires_at, on_expiry, status, decided_by, decided_at, decision, "
    "edited_args, response, note, server"
)


def approval_row(a: Approval) -> tuple[Any, ...]:
    """The column values of ``a`` (JSON fields as canonical text) in APPROVAL_COLS order."""
    from tether.durable.entries import encode_json

    def text(value: Any, what: str) -> str | None:
        return None if value is None else encode_json(value, what=f"approval {what}")

    return (
        a.id, a.session_id, a.interrupt_id, a.source, a.name, a.tool,
        encode_json(a.arguments, what="approval arguments"), a.args_sha256,
        encode_json(a.reason, what="approval reason"), a.requested_at, a.expires_at,
        a.on_expiry, a.status, a.decided_by, a.decided_at, a.decision,
        text(a.edited_args, "edited arguments"), text(a.response, "response"), a.note,
        a.server,
    )  # fmt: skip


def approval_from_row(r: Sequence[Any]) -> Approval:
    def load(value: Any) -> Any:
        return None if value is None else json.loads(value)

    return Approval(
        r[0], r[1], r[2], r[3], r[4], r[5], json.loads(r[6]), r[7], json.loads(r[8]),
        float(r[9]), None if r[10] is None else float(r[10]), r[11], r[12], r[13],
        None if r[14] is None else float(r[14]), r[15], load(r[16]), load(r[17]), r[18],
        r[19],
    )  # fmt: skip


# Moved to tether.governance.masks: still importable from here for one release.
_MOVED = frozenset({"MASK", "SECRET_KEY", "redact_secrets"})


def __getattr__(name: str) -> Any:
    if name not in _MOVED:
        raise AttributeError(f"module 'tether.durable.approval_types' has no attribute {name!r}")
    warnings.warn(
        f"tether.durable.approval_types.{name} moved to tether.governance.masks; this alias "
        "leaves in the next release",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(importlib.import_module("tether.governance.masks"), name)
