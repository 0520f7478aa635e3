"""The JSON API: approvals, decisions, sessions, audit and inbox updates.

Everything is read from the store on each request, every store call through
:class:`~tether.ops.server.offload.StoreRunner` (off the event loop for SQLite); a
decision names only the approval id, the decision (decision_body.py), a note and edited
arguments (merged over the real arguments that only the session journal holds, and
validated through the app factory's Agent, built once per session: agents.py).
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any, Final

from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse, StreamingResponse

from tether.durable.approval_types import ApprovalConflict, ApprovalError
from tether.durable.errors import CorruptEntry, StoreError
from tether.durable.session_list import SEARCH_MAX
from tether.durable.store import SESSION_STATUSES
from tether.governance import decide_approval
from tether.ops.app_loader import AppFactory
from tether.ops.decision_trace import trace_decided, tracing_on
from tether.ops.server.agents import SessionAgents
from tether.ops.server.audit_export import EXPORT_PAGE as EXPORT_PAGE
from tether.ops.server.audit_export import NDJSON as NDJSON
from tether.ops.server.audit_export import export_audit
from tether.ops.server.auth import Policy, allowed, authenticate, default_policy, subject
from tether.ops.server.changes import ChangeFeed
from tether.ops.server.decision_body import read_decision
from tether.ops.server.offload import StoreRunner
from tether.ops.server.refusals import RefusalLog
from tether.ops.server.request_input import MAX_BODY as MAX_BODY
from tether.ops.server.request_input import query_choice, query_float, query_int, read_body
from tether.ops.server.responses import NO_STORE as NO_STORE
from tether.ops.server.responses import error as error
from tether.ops.server.responses import not_readable
from tether.ops.server.responses import ok as ok
from tether.ops.server.views import (
    approval_json,
    audit_json,
    session_json,
    summary_json,
    timeline_json,
    verify_json,
)

if TYPE_CHECKING:
    from starlette.requests import Request

    from tether.agent import Agent
    from tether.durable import Store
    from tether.durable.approvals import Redactor

log = logging.getLogger("tether.server")

APPROVAL_STATUSES: Final = ("pending", "approved", "denied", "expired", "any")
MAX_LIMIT: Final = 1000
TEXT_MATCHES: Final = 20
"""Full-text hits ``GET /api/sessions?q=`` adds (``matches``), best first."""
MAX_WAIT: Final = 25.0


class Api:
    """The route handlers, bound to one store, policy and (optional) app factory."""

    def __init__(
        self, store: Store, policy: Policy | None = None, app_factory: AppFactory | None = None
    ) -> None:
        self.store = store
        self.policy = policy or default_policy
        self.agents = None if app_factory is None else SessionAgents(app_factory)
        self.run = StoreRunner(store)
        self.feed = ChangeFeed(self.run)
        self.refusals = RefusalLog(self._audit_append)

    async def _audit_append(self, event: str, data: dict[str, Any], session: str | None) -> None:
        await self.run(self.store.audit.append, event, data, session_id=session)

    async def close(self, *, close_store: bool) -> None:
        """Stop the long-poll poller, close the factory's agents, write pending refusal
        counts, close the store if asked, stop the store threads."""
        try:
            await self.feed.close()
            if self.agents is not None:
                await self.agents.close()
            try:
                await self.refusals.flush()
            except StoreError as exc:
                log.error("could not record the last refusal counts: %s", exc)
            if close_store:
                await self.run(self.store.close)
        finally:
            self.run.close()

    async def list_approvals(self, request: Request) -> JSONResponse:
        approver = await authenticate(request, self.run, "read")
        session = request.query_params.get("session") or None
        tool = request.query_params.get("tool") or None
        status = query_choice(request, "status", APPROVAL_STATUSES) or "pending"
        limit = query_int(request, "limit", 100, 1, MAX_LIMIT)
        if status == "pending":
            rows = await self.run(self.store.approvals.pending, session, tool, None, limit)
        else:
            rows = await self.run(
                self.store.approvals.find,
                session_id=session,
                status=None if status == "any" else status,  # type: ignore[arg-type]
                tool=tool,
                limit=limit,
            )
        items = [
            approval_json(a, can_decide=a.status == "pending" and self.policy(approver, a))
            for a in rows
        ]
        return ok({"approvals": items})

    async def get_approval(self, request: Request) -> JSONResponse:
        approver = await authenticate(request, self.run, "read")
        a = await self.run(self.store.approvals.get, request.path_params["approval_id"])
        can = a.status == "pending" and self.policy(approver, a)
        return ok(approval_json(a, can_decide=can))

    async def decide(self, request: Request) -> JSONResponse:
        approver = await authenticate(request, self.run, "read")
        current = await self.run(self.store.approvals.get, request.path_params["approval_id"])
        if not self.policy(approver, current):
            await self.refusals.refused(
                approver.name,
                {"approval_id": current.id, "approver": approver.name, "why": "policy"},
                current.session_id,
            )
            raise HTTPException(
                403,
                f"approver {approver.name!r} (roles: {', '.join(approver.roles)}) may not "
                f"decide approvals for {subject(current)!r}; it needs a role like "
                f"approve:{subject(current)} or admin",
            )
        asked = read_decision(await read_body(request), current)
        validate = None
        if asked.edited_args is not None:
            if self.agents is None:
                raise HTTPException(
                    400,
                    "edited arguments are refused: this server cannot check them against the "
                    "tool's schema; start it with --app module:factory (the factory building "
                    "the session's Agent), or approve without edits",
                )
            validate = await self._agent(current.session_id, "the agent to validate edits")
        started = time.time_ns()
        try:
            decided = await self.run(
                decide_approval,
                self.store,
                current.id,
                asked.store_decision,  # type: ignore[arg-type]
                decided_by=approver.name,
                note=asked.note,
                edited_args=asked.edited_args,
                response=asked.response,
                agent=validate,
            )
        except ApprovalConflict as exc:
            a = exc.approval
            return error(
                409, str(exc), decided_by=a.decided_by, status=a.status, decided_at=a.decided_at
            )
        except ApprovalError as exc:
            return error(409, str(exc), decided_by=None, status=current.status, decided_at=None)
        except ValueError as exc:
            raise HTTPException(400, str(exc)) from None
        log.info("approval %s %s by %s over HTTP", decided.id, asked.asked, approver.name)
        if tracing_on():
            await trace_decided(self.store, decided, via="http", started_ns=started, run=self.run)
        return ok(approval_json(decided, can_decide=False))

    # -- sessions ----------------------------------------------------------------------

    async def list_sessions(self, request: Request) -> JSONResponse:
        """Most recently active first, with counts; filtered and paged in the store. With
        ``q``: the sessions whose id contains it, and ``matches``, the redacted full-text
        hits of its words in the sessions' messages."""
        await authenticate(request, self.run, "sessions")
        status = query_choice(request, "status", SESSION_STATUSES)
        limit = query_int(request, "limit", 100, 1, MAX_LIMIT)
        offset = query_int(request, "offset", 0, 0, 2**31)
        search = request.query_params.get("q") or None
        if search is not None and len(search) > SEARCH_MAX:
            raise HTTPException(400, f"query parameter 'q' must be at most {SEARCH_MAX} characters")
        page = await self.run(
            self.store.session_page,
            status=status,  # type: ignore[arg-type]
            search=search,
            offset=offset,
            limit=limit,
        )
        body: dict[str, Any] = {
            "sessions": [summary_json(s) for s in page.sessions],
            "total": page.total,
            "offset": page.offset,
            "limit": limit,
        }
        if search is not None:  # and the sessions whose messages hold its words
            body["matches"] = await self._text_matches(search)
        return ok(body)

    async def _text_matches(self, query: str) -> list[dict[str, Any]]:
        """Full-text hits for ``q`` (:func:`tether.governance.search.search_sessions`)."""
        from tether.governance.search import can_search, search_sessions

        if not can_search(self.store):
            return []
        hits = await self.run(search_sessions, self.store, query, limit=TEXT_MATCHES)
        return [hit.json() for hit in hits]

    async def get_session(self, request: Request) -> JSONResponse:
        from tether.governance.redaction import show_session, tree_masks
        from tether.governance.redaction_tree import tree_sessions
        from tether.session import fold

        await authenticate(request, self.run, "sessions")
        tail = query_int(request, "tail", 50, 0, 10_000)
        session_id = request.path_params["session_id"]
        try:
            record = await self.run(self.store.load, session_id)
        except CorruptEntry as exc:  # a row the store cannot decode
            return not_readable(session_id, exc)
        if record is None:
            raise HTTPException(404, f"no session {session_id!r} in this store")
        try:
            view = fold(record)
        except (KeyError, ValueError, TypeError) as exc:  # a decoded entry fold cannot use
            return not_readable(session_id, exc)
        redactor = await self._redactor(session_id)
        approvals = await self.run(self.store.approvals.find, session_id=session_id, limit=10_000)
        tree = tree_masks(await self.run(tree_sessions, self.store, session_id), redactor)
        shown = show_session(record, view, approvals, redactor=redactor, tree=tree)
        return ok(session_json(record, shown, tail))

    async def timeline(self, request: Request) -> JSONResponse:
        """One row per step of the session (see :mod:`tether.ops.timeline`), redacted
        through the same :func:`~tether.governance.redaction.show_session` as every view."""
        from tether.ops.timeline import read_timeline, timeline_of

        await authenticate(request, self.run, "sessions")
        session_id = request.path_params["session_id"]
        try:
            data = await self.run(read_timeline, self.store, session_id)
        except CorruptEntry as exc:
            return not_readable(session_id, exc)
        if data is None:
            raise HTTPException(404, f"no session {session_id!r} in this store")
        redactor = await self._redactor(session_id)
        try:
            timeline = timeline_of(data, redactor)
        except (KeyError, ValueError, TypeError) as exc:  # a decoded entry fold cannot use
            return not_readable(session_id, exc)
        return ok(timeline_json(timeline, data.record))

    async def _redactor(self, session_id: str) -> Redactor | None:
        """The custom redactor of the session's Agent (``--app``), None without a factory."""
        from tether.governance.redaction import redactor_of

        if self.agents is None:
            return None
        return redactor_of(
            await self._agent(session_id, "the session's agent to apply its redactor")
        )

    async def _agent(self, session_id: str, what: str) -> Agent:
        """The session's kept Agent (see agents.py); 503 naming ``what`` if the factory
        fails."""
        assert self.agents is not None
        try:
            return await self.agents.get(session_id)
        except Exception as exc:
            log.error("app factory failed for session %s: %r", session_id, exc)
            raise HTTPException(503, f"cannot build {what}: {exc}") from None

    # -- audit -------------------------------------------------------------------------

    async def audit(self, request: Request) -> JSONResponse:
        await authenticate(request, self.run, "audit")
        session = request.query_params.get("session") or None
        after = query_int(request, "after", 0, 0, 2**53)
        limit = query_int(request, "limit", 500, 1, 10_000)
        records = await self.run(self.store.audit.records, session, after, limit)
        return ok({"records": [audit_json(r) for r in records]})

    async def audit_verify(self, request: Request) -> JSONResponse:
        await authenticate(request, self.run, "audit")
        return ok(verify_json(await self.run(self.store.audit.verify)))

    async def audit_export(self, request: Request) -> StreamingResponse:
        """The verified chain's records as JSONL (see audit_export.py)."""
        await authenticate(request, self.run, "audit")
        session = request.query_params.get("session") or None
        return await export_audit(self.run, self.store, session)

    # -- who am I ---------------------------------------------------------------------

    async def me(self, request: Request) -> JSONResponse:
        """The caller's name and roles, and which views they open (the page asks)."""
        approver = await authenticate(request, self.run, "sessions")
        return ok(
            {
                "name": approver.name,
                "roles": list(approver.roles),
                "can": {
                    "inbox": allowed(approver, "read"),
                    "sessions": True,
                    "audit": allowed(approver, "audit"),
                },
            }
        )

    # -- inbox updates (long poll) -----------------------------------------------------

    async def events(self, request: Request) -> JSONResponse:
        """Long poll: answers at once when ``since`` is not the current cursor, else when
        the inbox changes or after ``wait`` seconds (one shared poller, see changes.py)."""
        await authenticate(request, self.run, "sessions")
        since = request.query_params.get("since")
        wait = query_float(request, "wait", 20.0, MAX_WAIT)
        cursor = await self.feed.wait(since, wait, request.is_disconnected)
        return ok({"cursor": cursor, "changed": cursor != since})
