"""A session read for the terminal: through the one redaction path, with the redactor of
the session's own Agent when ``--app`` builds it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NoReturn

import typer
from rich.console import Console

from tether.ops.cli_common import fail, with_store
from tether.ops.store_url import describe

if TYPE_CHECKING:
    from tether.durable import Approval, SessionRecord, Store
    from tether.durable.approvals import Redactor
    from tether.governance.redaction import ShownSession


def app_redactor(app_spec: str | None, session_id: str) -> Redactor | None:
    """The custom redactor of the session's Agent, built by ``--app`` (None without it)."""
    if app_spec is None:
        return None
    from tether.governance.redaction import redactor_of
    from tether.ops.worker_cli import load_factory

    try:
        return redactor_of(load_factory(app_spec).build(session_id))
    except typer.BadParameter:
        raise
    except Exception as exc:
        fail(f"cannot build the agent from {app_spec}: {type(exc).__name__}: {exc}")


def load_shown(
    url: str, session_id: str, app_spec: str | None = None, unredacted: bool = False
) -> tuple[SessionRecord, ShownSession]:
    """The session as people see it: through :func:`~tether.governance.redaction.show_session`
    (the redactor of ``app_spec``'s Agent when given; ``unredacted`` shows real values)."""
    from tether.governance.redaction import show_session, tree_masks
    from tether.governance.redaction_tree import tree_sessions
    from tether.session import fold

    async def read(store: Store) -> tuple[SessionRecord | None, list[Approval], list[Any]]:
        record = await store.load(session_id)
        if record is None:
            return None, [], []
        approvals = await store.approvals.find(session_id=session_id, limit=10_000)
        return record, approvals, await tree_sessions(store, session_id)  # its agent tree

    record, approvals, tree = with_store(url, read, read_only=True)
    if record is None:
        no_session(url, session_id)
    try:
        view = fold(record)
    except (KeyError, ValueError, TypeError) as exc:
        unreadable(session_id, exc)
    redactor = app_redactor(app_spec, session_id)
    if unredacted:
        Console(stderr=True, highlight=False).print(
            f"warning: session {session_id!r} shown UNREDACTED (--unredacted): real argument "
            "values, secrets included",
            markup=False,
            style="bold yellow",
        )
    masks = tree_masks(tree, redactor)
    return record, show_session(
        record, view, approvals, redactor=redactor, unredacted=unredacted, tree=masks
    )


def no_session(url: str, session_id: str) -> NoReturn:
    """Exit 1: the store has no such session (and how to list the ones it has)."""
    fail(
        f"no session {session_id!r} in {describe(url)}",
        f"list the sessions with: tether sessions list --store {describe(url)}",
    )


def unreadable(session_id: str, exc: Exception) -> NoReturn:
    """Exit 1: the session's journal has an entry the fold cannot use."""
    fail(f"session {session_id!r} has a journal entry tether cannot read ({exc!r})")
