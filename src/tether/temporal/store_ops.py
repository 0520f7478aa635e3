"""The worker side of :mod:`tether.temporal.store_proxy`: one store call, made safe to repeat.

An activity can run again after it already took effect (its worker died before it
reported), and so can a local activity (the workflow task failed after it ran). The two
writes a run makes are therefore idempotent here: an ``append`` whose entries are already
the session's next ones returns them instead of failing the compare-and-set, and a
workflow's own session is never busy to itself (``acquire_lease`` adopts the lease an
earlier attempt took). The session's metadata names the workflow that owns it
(:data:`TEMPORAL_KEY`), which also keeps ``tether worker`` from claiming it.
"""

from __future__ import annotations

from typing import Any, Final

from tether.durable.claims import TEMPORAL_KEY
from tether.errors import TetherError
from tether.temporal.store_proxy import FORWARDED
from tether.temporal.wire import decode, encode, error_data

STORE_METHODS: Final = frozenset(
    {
        "create",
        "load",
        "append",
        "read_entries",
        "acquire_lease",
        "renew_lease",
        "release_lease",
        "set_status",
        "list_sessions",
        "session_page",
        "search_text",
    }
)

__all__ = ["TEMPORAL_KEY", "run_store_call"]


async def run_store_call(store: Any, workflow_id: str, payload: dict[str, Any]) -> dict[str, Any]:
    """Make the call ``payload`` describes (see ``call_store``); a tether error comes back
    as data (``{"error": ...}``), so the workflow raises it instead of Temporal retrying."""
    target, method = str(payload.get("target")), str(payload.get("method"))
    allowed = STORE_METHODS if target == "store" else FORWARDED.get(target, frozenset())
    if method not in allowed:
        return {"error": {"type": "WireError", "message": f"store.{target}.{method} refused"}}
    args: list[Any] = decode(payload.get("args", []))
    kwargs: dict[str, Any] = decode(payload.get("kwargs", {"$m": {}}))
    try:
        if target == "store" and method == "append":
            value = await _append(store, args, kwargs)
        elif target == "store" and method == "acquire_lease":
            value = await _acquire(store, workflow_id, args, kwargs)
        else:
            owner = store if target == "store" else getattr(store, target)
            value = await getattr(owner, method)(*args, **kwargs)
    except TetherError as exc:
        return {"error": error_data(exc)}
    return {"value": encode(value)}


async def _append(store: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
    from tether.durable.errors import LeaseLost, SessionConflict

    session_id, expected, entries = args
    try:
        return await store.append(session_id, expected, entries, **kwargs)
    except (SessionConflict, LeaseLost):
        done = await store.read_entries(session_id, expected, until_seq=expected + len(entries))
        if [(e.kind, e.data) for e in done] == [(kind, data) for kind, data in entries]:
            return done  # an earlier attempt of this very call wrote them
        raise


async def _acquire(store: Any, workflow_id: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    from tether.durable.errors import SessionBusy

    (session_id,) = args
    if kwargs.get("create") and await store.load(session_id) is None:
        await store.create(session_id, metadata={TEMPORAL_KEY: {"workflow_id": workflow_id}})
    try:
        return await store.acquire_lease(session_id, **kwargs)
    except SessionBusy:
        record = await store.load(session_id)
        owner = (record.metadata.get(TEMPORAL_KEY) or {}) if record is not None else {}
        if record is None or record.lease is None or owner.get("workflow_id") != workflow_id:
            raise
        store.adopt_lease(record.lease)  # this workflow's own, from an earlier attempt
        return await store.acquire_lease(session_id, **kwargs)
