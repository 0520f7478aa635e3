"""The store a workflow's agent sees: every call is a local activity on the real store.

The agent's loop runs in the workflow unchanged, so its journal, approval rows and audit
chain land in tether's own store (``tether sessions``, the inbox and ``tether audit``
see them), and a replayed workflow reads each store call's recorded result instead of
calling again. The activity side is :mod:`tether.temporal.store_ops`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import timedelta
from typing import Any, Final

from tether.temporal.wire import decode, encode, raise_error

STORE_ACTIVITY: Final = "tether.store"
STORE_TIMEOUT: Final = timedelta(seconds=60)
FORWARDED: Final = {
    "approvals": frozenset(
        {"pending", "find", "get", "decide", "expire_due", "answers_for", "response_of", "insert"}
    ),
    "audit": frozenset({"append", "append_many", "head"}),
    "approvers": frozenset(),
    "memory_entries": frozenset({"entries", "get", "add", "replace", "remove", "scopes"}),
}
"""The methods of ``store.approvals`` and ``store.audit`` a run calls (others are refused)."""


async def call_store(
    session_id: str, target: str, method: str, /, *args: Any, **kwargs: Any
) -> Any:
    """Run ``store.<target>.<method>(*args, **kwargs)`` as a local activity (for the agent
    of ``session_id``; the method's own arguments may name another session)."""
    from temporalio import workflow
    from temporalio.common import RetryPolicy

    payload = {
        "session_id": session_id,
        "target": target,
        "method": method,
        "args": encode(list(args)),
        "kwargs": encode(kwargs),
    }
    answer: dict[str, Any] = await workflow.execute_local_activity(
        STORE_ACTIVITY,
        payload,
        start_to_close_timeout=STORE_TIMEOUT,
        retry_policy=RetryPolicy(maximum_attempts=5),
    )
    if "error" in answer:
        raise_error(answer["error"])
    return decode(answer.get("value"))


class _Forwarding:
    """``store.approvals`` / ``store.audit`` of a workflow: the methods a run calls."""

    def __init__(self, session_id: str, target: str) -> None:
        self._session_id = session_id
        self._target = target

    def __getattr__(self, method: str) -> Callable[..., Awaitable[Any]]:
        if method not in FORWARDED[self._target]:
            raise AttributeError(
                f"store.{self._target}.{method} is not available inside a Temporal workflow"
            )

        async def forward(*args: Any, **kwargs: Any) -> Any:
            kwargs.pop("validate", None)  # the edit rule ran in the workflow already
            kwargs.pop("redactor", None)  # a callable cannot cross; rows come pre-redacted
            return await call_store(self._session_id, self._target, method, *args, **kwargs)

        return forward


class _Approvals(_Forwarding):
    async def request(self, session_id: str, interrupt: Any, **options: Any) -> Any:
        """Built here (the redactor is the workflow's agent's), inserted there."""
        from tether.governance.approvals import prepare_request

        approval, event = prepare_request(session_id, interrupt, **options)
        return await call_store(self._session_id, "approvals", "insert", approval, event)


class WorkflowStore:
    """A :class:`tether.durable.store.Store` whose calls are local activities."""

    def __init__(self, session_id: str) -> None:
        self._session_id = session_id
        self._approvals = _Approvals(session_id, "approvals")
        self._audit = _Forwarding(session_id, "audit")
        self._approvers = _Forwarding(session_id, "approvers")  # none of its methods
        self._memory = _Forwarding(session_id, "memory_entries")

    @property
    def approvals(self) -> Any:
        return self._approvals

    @property
    def audit(self) -> Any:
        return self._audit

    @property
    def approvers(self) -> Any:
        return self._approvers

    @property
    def memory_entries(self) -> Any:
        return self._memory

    async def search_text(self, query: Any) -> Any:
        return await self._call("search_text", query)

    async def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return await call_store(self._session_id, "store", method, *args, **kwargs)

    async def create(self, session_id: str, *, metadata: dict[str, Any] | None = None) -> Any:
        return await self._call("create", session_id, metadata=metadata)

    async def load(self, session_id: str, *, known_version: int | None = None) -> Any:
        return await self._call("load", session_id, known_version=known_version)

    async def append(
        self,
        session_id: str,
        expected_version: int,
        entries: Sequence[tuple[str, dict[str, Any]]],
        *,
        status: str | None = None,
        durable: bool = False,
        lease: Any = None,
        sidecar: Any = None,
    ) -> Any:
        return await self._call(
            "append",
            session_id,
            expected_version,
            [tuple(e) for e in entries],
            status=status,
            durable=durable,
            lease=lease,
            sidecar=sidecar,
        )

    async def read_entries(
        self, session_id: str, after_seq: int = 0, *, until_seq: int | None = None
    ) -> Any:
        return await self._call("read_entries", session_id, after_seq, until_seq=until_seq)

    async def acquire_lease(
        self, session_id: str, *, ttl: float = 30.0, create: bool = False
    ) -> Any:
        return await self._call("acquire_lease", session_id, ttl=ttl, create=create)

    async def renew_lease(self, lease: Any, *, ttl: float = 30.0) -> Any:
        return await self._call("renew_lease", lease, ttl=ttl)

    async def release_lease(self, lease: Any) -> None:
        await self._call("release_lease", lease)

    async def set_status(self, session_id: str, status: str) -> None:
        await self._call("set_status", session_id, status)

    async def list_sessions(self, *, status: str | None = None, limit: int = 100) -> Any:
        return await self._call("list_sessions", status=status, limit=limit)

    async def session_page(self, **options: Any) -> Any:
        return await self._call("session_page", **options)

    async def delete(self, session_id: str) -> None:
        from tether.errors import SessionStateError

        raise SessionStateError("a Temporal workflow does not delete sessions")

    async def close(self) -> None:
        """Nothing to close: the real store belongs to the worker."""
