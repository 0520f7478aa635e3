"""The approver roles the default server policy knows, checked when an approver is added.

``approve:PATTERN`` (a tool-name glob; ``interrupt:NAME`` for approvals without a tool),
``viewer``, ``auditor``, ``admin`` and ``invoke`` (A2A callers, tether.a2a); see :mod:`tether.ops.server.auth`. The store takes
any role (a custom ``create_app(policy=...)`` may use its own); ``tether approvers add``
refuses the others unless asked to (``--custom-role``), so a typo does not issue a token
that is refused later.
"""

from __future__ import annotations

APPROVE_PREFIX = "approve:"
PLAIN_ROLES = ("viewer", "auditor", "admin", "invoke")
VALID_ROLES = (
    "approve:PATTERN (a tool-name glob, e.g. approve:* or approve:delete_*), "
    + ", ".join(PLAIN_ROLES)
)


def role_problem(role: str) -> str | None:
    """Why the default policy would never grant ``role`` anything, or None when it is valid."""
    if role in PLAIN_ROLES:
        return None
    if role.startswith(APPROVE_PREFIX):
        if role[len(APPROVE_PREFIX) :].strip():
            return None
        return f"role {role!r} has no tool pattern; write e.g. approve:* or approve:transfer"
    lowered = role.strip().lower()
    if lowered in PLAIN_ROLES or lowered.startswith(APPROVE_PREFIX):
        return f"unknown role {role!r} (roles are case-sensitive and unpadded)"
    if lowered.rstrip(":") == "approve":
        return f"role {role!r} needs a tool pattern: approve:PATTERN, e.g. approve:*"
    return f"unknown role {role!r}"
