"""The ``store.approvals`` protocol, as the :class:`~tether.durable.store.Store` protocol
names it (the rules behind it: :class:`tether.durable.approvals.ApprovalsBase`, which
every built-in store's approvals subclass). Here, apart from the rules, so the Store
protocol does not import them (they import the store)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from tether.durable.approval_types import DEFAULT_TTL

if TYPE_CHECKING:
    from tether.durable.approval_types import (
        Approval,
        ApprovalStatus,
        Decision,
        ExpiryAction,
        Redactor,
    )


class Approvals(Protocol):
    """``store.approvals``: see :class:`~tether.durable.approvals.ApprovalsBase` for each
    method (the rules behind request / decide / answers_for are governance's)."""

    async def request(
        self,
        session_id: str,
        interrupt: Any,
        *,
        redactor: Redactor | None = None,
        ttl: float | None = DEFAULT_TTL,
        on_expiry: ExpiryAction = "deny",
        server: str | None = None,
    ) -> Approval: ...
    async def pending(
        self,
        session_id: str | None = None,
        tool: str | None = None,
        older_than: float | None = None,
        limit: int = 100,
    ) -> list[Approval]: ...
    async def find(
        self,
        *,
        session_id: str | None = None,
        status: ApprovalStatus | None = None,
        tool: str | None = None,
        limit: int = 100,
    ) -> list[Approval]: ...
    async def get(self, approval_id: str) -> Approval: ...
    async def decide(
        self,
        approval_id: str,
        decision: Decision,
        *,
        decided_by: str,
        note: str | None = None,
        edited_args: dict[str, Any] | None = None,
        response: Any = None,
        validate: Any = None,
        redactor: Redactor | None = None,
    ) -> Approval: ...
    async def expire_due(self, now: float | None = None) -> list[Approval]: ...
    async def answers_for(self, session_id: str) -> dict[str, Any]: ...
