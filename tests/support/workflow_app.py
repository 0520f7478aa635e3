"""The app the serving tests give every host: ``--app workflow_app:workflow_factory``.

The factory returns a *workflow*, not an Agent: ``draft`` (a function) -> ``review``, a
Parallel of ``legal`` (calls ``write``, which the workflow's policy confirms: one inbox
row, addressed ``review#2/legal#1/confirm:ConfirmWrites``) and ``tech`` (answers at once)
-> ``summary``. Its text is ``summary: [...]``, the branches' outputs as a JSON list.

Environment: ``TETHER_WORKFLOW_STORE`` (store URL; unset: the session lives in memory),
``TETHER_WORKFLOW_OUT`` (``write`` appends one line per real execution).
``not_an_app`` (annotated ``-> str``) and ``returns_a_string`` (unannotated) return neither an
Agent nor a workflow: the hosts refuse them, at load and when they build.
"""

from __future__ import annotations

import os
from pathlib import Path

from workflow_agents import ConfirmWrites, echo, writer

from tether import Agent, tool
from tether.durable import Store
from tether.ops.store_url import open_store
from tether.workflows import Parallel, Sequential, StepContext

_STORES: dict[str, Store] = {}
ADDRESS = "review#2/legal#1/confirm:ConfirmWrites"
"""The approval's name: the legal branch's Confirm, lifted to the workflow's session."""
AGENTS_ADDRESS = "review#1/legal#1/confirm:ConfirmWrites"
"""The same in ``agents_workflow_factory``'s pipeline (no draft step)."""


def _store() -> Store | None:
    url = os.environ.get("TETHER_WORKFLOW_STORE")
    if not url:
        return None
    return _STORES.get(url) or _STORES.setdefault(url, open_store(url))


def workflow_factory(session_id: str, store: Store | None = None) -> Sequential:
    return _pipeline(session_id, store, draft=True)


def agents_workflow_factory(session_id: str, store: Store | None = None) -> Sequential:
    """The pipeline without the function step (Temporal cannot run a tool that takes a
    ToolContext yet, design section 17): ``review`` is node 1 (AGENTS_ADDRESS)."""
    return _pipeline(session_id, store, draft=False)


def _pipeline(session_id: str, store: Store | None, *, draft: bool) -> Sequential:
    out = Path(os.environ.get("TETHER_WORKFLOW_OUT", os.devnull))

    @tool
    def write(text: str) -> str:
        """Write a line (a side effect that must happen once).

        Args:
            text: The line.
        """
        with out.open("a", encoding="utf-8") as f:
            f.write(f"{session_id} {text}\n")
        return f"ok {text}"

    def draft_of(step: StepContext) -> str:
        return f"draft of {step.input}"

    legal = Agent(writer("legal"), tools=[write], name="legal")
    tech = Agent(echo("tech"), name="tech")
    summary = Agent(echo("summary"), name="summary")
    first = [("draft", draft_of)] if draft else []
    return Sequential(
        *first,
        ("review", Parallel(legal, tech)),
        summary,
        name="pipeline",
        store=store if store is not None else _store(),
        session_id=session_id,
        interventions=[ConfirmWrites()],
    )


def not_an_app(session_id: str) -> str:
    """A factory gone wrong, and annotated so: refused when ``--app`` is loaded."""
    return f"a string for {session_id}"


def returns_a_string(session_id: str):  # type: ignore[no-untyped-def]  # unannotated on purpose
    """The same mistake without an annotation: refused when it builds."""
    return f"a string for {session_id}"
