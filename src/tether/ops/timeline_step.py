"""One row of a session's timeline (:mod:`tether.ops.timeline`) and what a row keeps."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from tether.durable import Approval

CLIP: Final = 2000
"""Characters of one text, argument list or result kept in a step's details."""
FAILED: Final = frozenset(
    {
        "error",
        "denied",
        "cancelled",
        "timeout",
        "failed",
        "in_doubt",
        "crashed",
        "in doubt -> aborted",
    }
)


def clip(text: str) -> str:
    """``text`` cut to :data:`CLIP` characters, saying how many more there were."""
    return text if len(text) <= CLIP else text[:CLIP] + f"... ({len(text) - CLIP} more)"


@dataclass
class Step:
    """One row: a step of the session, its span on the time axis and its details."""

    kind: str
    title: str
    start: float
    end: float
    order: float
    seq: int | None = None
    status: str = "ok"
    detail: dict[str, Any] = field(default_factory=dict)
    call_id: str | None = None
    approval_id: str | None = None
    interrupt_id: str | None = None
    audit: list[int] = field(default_factory=list)
    spawn: str | None = None
    """A tool call's child session id, if the tool is a sub-agent (addresses.py)."""

    def json(self, index: int, depth: int, parent: int | None, session: str) -> dict[str, Any]:
        return {
            "index": index,
            "depth": depth,
            "parent": parent,
            "session_id": session,
            "kind": self.kind,
            "title": self.title,
            "seq": self.seq,
            "start": self.start,
            "end": self.end,
            "duration": max(0.0, self.end - self.start),
            "status": self.status,
            "failed": self.status in FAILED,
            "call_id": self.call_id,
            "approval_id": self.approval_id,
            "interrupt_id": self.interrupt_id,
            "audit_seqs": self.audit,
            "detail": self.detail,
        }


ApprovalOf = Callable[[str], "Approval | None"]
"""The approval that answered an interrupt (by the interrupt's id in this session)."""
