"""The one seam through which a store applies governance: durable/ never imports it.

``store.approvals.request / decide / answers_for / response_of / real_arguments`` follow
the approval rules, and ``store.session_page`` shows each session's first prompt
redacted. Both are governance (:mod:`tether.governance`), which imports
``tether.durable`` and is never imported by it: the stores reach it through the
:class:`StoreRules` installed here. ``tether/__init__.py`` installs a factory of
:class:`tether.governance.approvals.Rules` (called at the first use, so ``import
tether`` loads no governance code); Python runs it before any module of
``tether.durable``, so every store has the rules from its first use.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Protocol

from tether.durable.errors import StoreError

if TYPE_CHECKING:
    from tether.durable.approval_types import (
        Approval,
        ApprovalStatus,
        Decision,
        ExpiryAction,
        Redactor,
    )
    from tether.durable.audit import AuditEvent
    from tether.durable.store import SessionRecord


class ApprovalRows(Protocol):
    """What the rules use of a store's approvals: its queries, its two writes (each one
    transaction with its audit record) and the journal of a row's session."""

    async def get(self, approval_id: str) -> Approval: ...
    async def find(
        self,
        *,
        session_id: str | None = None,
        status: ApprovalStatus | None = None,
        tool: str | None = None,
        limit: int = 100,
    ) -> list[Approval]: ...
    async def insert(self, approval: Approval, audit: AuditEvent) -> Approval: ...
    async def write_decision(self, decided: Approval, audit: AuditEvent) -> Approval: ...
    async def load_session(self, session_id: str) -> SessionRecord | None: ...


class StoreRules(Protocol):
    """What a store applies beyond storage; ``rows`` is the store's ``approvals``. See
    :class:`~tether.durable.approvals.ApprovalsBase` for what each method does."""

    async def request(
        self,
        rows: ApprovalRows,
        session_id: str,
        interrupt: Any,
        *,
        redactor: Redactor | None,
        ttl: float | None,
        on_expiry: ExpiryAction,
        server: str | None,
    ) -> Approval: ...
    async def decide(
        self,
        rows: ApprovalRows,
        approval_id: str,
        decision: Decision,
        *,
        decided_by: str,
        note: str | None,
        edited_args: dict[str, Any] | None,
        response: Any,
        validate: Any,
        redactor: Redactor | None,
    ) -> Approval: ...
    async def answers_for(self, rows: ApprovalRows, session_id: str) -> dict[str, Any]: ...
    async def response_of(self, rows: ApprovalRows, approval: Approval) -> Any: ...
    async def real_arguments(self, rows: ApprovalRows, approval: Approval) -> dict[str, Any]: ...
    def shown_prompt(
        self, text: str | None, calls: Iterable[dict[str, Any]], approvals: Iterable[Approval]
    ) -> str | None: ...


_installed: StoreRules | None = None
_factory: Callable[[], StoreRules] | None = None


def install(
    rules: StoreRules | None = None, *, factory: Callable[[], StoreRules] | None = None
) -> None:
    """Make ``rules`` what every store applies, or ``factory`` the function that makes
    them at their first use (``tether/__init__.py`` gives one: ``import tether`` then
    loads no governance code)."""
    global _installed, _factory
    _installed, _factory = rules, factory


def installed() -> StoreRules:
    """The installed rules; a :class:`StoreError` when none is (nothing is recorded)."""
    global _installed, _factory
    if _installed is None and _factory is not None:
        _installed, _factory = _factory(), None
    if _installed is None:
        raise StoreError(
            "no governance rules are installed, so approvals cannot be filed or decided and "
            "prompts cannot be redacted: they come from tether.governance, installed when the "
            "tether package is imported (tether.durable.rules.install)"
        )
    return _installed
