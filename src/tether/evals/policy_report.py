"""What :func:`tether.evals.policy_check.check_policy` reports: per recorded call the verdict
then and now, counts per tool and verdict, and the sessions that could not be read."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Final

VERDICTS: Final = ("proceed", "deny", "guide", "confirm", "transform", "error")
"""A call's verdict: not run (``deny``; ``guide``: the model gets guidance), a human would be
asked (``confirm``), it runs otherwise (``transform``), a policy raised (``error``), or it
runs as the model asked (``proceed``)."""


@dataclass(frozen=True, slots=True)
class CallCheck:
    """One recorded call: what happened then and what the policy would do now."""

    session_id: str
    call_id: str
    tool: str
    at: float
    """When the model asked for it (the journal entry's time)."""
    then: str
    """The verdict it got (one of :data:`VERDICTS`, from the journal and audit records)."""
    status: str
    """Its recorded result's status (``ok``, ``error``, ``denied``...; ``none``: no result)."""
    now: str
    reason: str
    """Why ``now`` (redacted): the denial or guidance, the questions asked, the policies."""
    arguments: dict[str, Any]
    """The model's arguments (redacted)."""
    rewritten: dict[str, Any] | None = None
    """A transform's arguments (redacted), else None."""
    policies: tuple[str, ...] = ()
    """``policy:Action`` of every non-Proceed intervention verdict now."""

    @property
    def changed(self) -> bool:
        return self.then != self.now

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "call_id": self.call_id,
            "tool": self.tool,
            "at": self.at,
            "then": self.then,
            "status": self.status,
            "now": self.now,
            "changed": self.changed,
            "reason": self.reason,
            "arguments": self.arguments,
            "rewritten": self.rewritten,
            "policies": list(self.policies),
        }


@dataclass(frozen=True, slots=True)
class SessionFailure:
    """A session whose journal could not be read (or folded): reported, not fatal."""

    session_id: str
    error: str


@dataclass(slots=True)
class ToolCounts:
    """One tool's calls: verdicts then and now, and how many changed."""

    then: Counter[str] = field(default_factory=Counter)
    now: Counter[str] = field(default_factory=Counter)
    changed: int = 0

    @property
    def calls(self) -> int:
        return sum(self.now.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "then": dict(self.then),
            "now": dict(self.now),
            "changed": self.changed,
        }


@dataclass(slots=True)
class PolicyReport:
    """What :func:`check_policy` found: counts over every call, per tool and verdict, and
    the rows of the calls the policy would not simply let through or judges otherwise now."""

    sessions: int = 0
    calls: int = 0
    then: Counter[str] = field(default_factory=Counter)
    now: Counter[str] = field(default_factory=Counter)
    tools: dict[str, ToolCounts] = field(default_factory=dict)
    changed: int = 0
    rows: list[CallCheck] = field(default_factory=list)
    rows_left_off: int = 0
    failures: list[SessionFailure] = field(default_factory=list)
    seconds: float = 0.0

    def add(self, check: CallCheck, max_rows: int) -> None:
        self.calls += 1
        self.then[check.then] += 1
        self.now[check.now] += 1
        per = self.tools.setdefault(check.tool, ToolCounts())
        per.then[check.then] += 1
        per.now[check.now] += 1
        per.changed += check.changed
        self.changed += check.changed
        if check.now != "proceed" or check.changed:
            if len(self.rows) < max_rows:
                self.rows.append(check)
            else:
                self.rows_left_off += 1

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``tether policy check --json``)."""
        return {
            "sessions": self.sessions,
            "calls": self.calls,
            "changed": self.changed,
            "then": dict(self.then),
            "now": dict(self.now),
            "tools": {tool: c.to_dict() for tool, c in sorted(self.tools.items())},
            "rows": [row.to_dict() for row in self.rows],
            "rows_left_off": self.rows_left_off,
            "failures": [{"session_id": f.session_id, "error": f.error} for f in self.failures],
            "seconds": round(self.seconds, 3),
        }
