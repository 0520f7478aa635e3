"""The built-in ``session_search`` tool: the model searches the text of past sessions.

The search runs in the agent's own store (:func:`tether.governance.search.search_sessions`:
the store's full-text index, then the one redaction path), within a scope the agent's
author sets: a session-id glob, or a function of the agent giving one (the user's
sessions, say). There is no default scope: an agent searches only what its author
granted. The asking session itself is left out (its messages are in the model's
context already). The result is JSON: ranked hits with session id, time, role and a
redacted snippet.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tether.errors import InputError, ToolArgumentError
from tether.tools.base import Tool
from tether.tools.context import ToolContext

if TYPE_CHECKING:
    from tether.agent_ref import AgentRef

SESSION_SEARCH = "session_search"
Scope = str | Callable[["AgentRef"], str]


def session_search(
    *, scope: Scope, name: str = SESSION_SEARCH, limit: int = 5, include_current: bool = False
) -> Tool:
    """The opt-in ``session_search`` tool (``Agent(tools=[..., session_search(scope=...)])``).

    ``scope``: the session-id glob the agent may search (``"support-*"``; ``"*"`` is the
    whole store, spelled out), or a function of the agent (its ``state``, ``session_id``,
    ``name``) returning one; ``limit``: hits per call (1..50); ``include_current``: also
    search the asking session."""
    from tether.durable.session_search import check_scope
    from tether.governance.search import LIMIT_MAX

    if not callable(scope):
        check_scope(scope)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= LIMIT_MAX:
        raise InputError(
            f"session_search(limit=...) must be between 1 and {LIMIT_MAX}, got {limit!r}"
        )

    async def run(query: str, context: ToolContext) -> str:
        """Search the messages of earlier sessions (user, assistant and tool text) for
        words; returns the best matches, newest first among equals, with a snippet each.

        Args:
            query: The words to look for (any of them matches; at most 500 characters).
        """
        from tether.governance.search import search_sessions

        agent = context.agent
        store = agent.runtime.store
        if store is None:
            raise ToolArgumentError("session_search needs the agent to have a store")
        glob = scope(agent) if callable(scope) else scope
        if not isinstance(glob, str) or not glob:
            raise InputError(f"the session_search scope function returned {glob!r}, not a glob")
        audit: Any = agent.runtime.audit
        try:
            hits = await search_sessions(
                store,
                query,
                scope=glob,
                exclude=() if include_current else (agent.session_id,),
                limit=limit,
                redactor=getattr(audit, "redactor", None),
            )
        except InputError as exc:
            raise ToolArgumentError(str(exc)) from None
        if not hits:
            return json.dumps({"hits": [], "note": "no past session matches these words"})
        return json.dumps({"hits": [h.json() for h in hits]}, ensure_ascii=False)

    return Tool(run, name=name, idempotent=True)
