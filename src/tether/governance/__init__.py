"""Governance: approval rules, redaction and the one decision path (docs/design.md s. 4, s. 8).

- :mod:`~tether.governance.approvals`: what ``store.approvals`` does on top of its rows
  (request / decide / ``answers_for``), installed into every store through
  :mod:`tether.durable.rules`.
- :mod:`~tether.governance.masks` and :mod:`~tether.governance.redaction`: the one
  redaction path for everything a person sees (with
  :mod:`~tether.governance.redaction_tree` for an agent tree and
  :mod:`~tether.governance.session_prompt` for the sessions list).
- :mod:`~tether.governance.edits`: the one edit rule (``check_edit``).
- :func:`decide_answers` is where an answer given to a run (``agent.resume``, the
  worker, ``tether mcp serve``) decides the interrupt's approval row; the inbox paths
  (CLI, HTTP) decide the row first through :func:`decide_approval`
  (``store.approvals.decide`` with the app's agent), and the run then resumes from it.

This package may import ``tether.durable``; ``tether.durable`` never imports it.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tether.governance.decide import decide_answers, decide_approval, default_decided_by

_DECIDE = frozenset({"decide_answers", "decide_approval", "default_decided_by"})


def __getattr__(name: str) -> Any:
    # loaded on first use: `import tether` installs the rules (approvals.py) only
    if name not in _DECIDE:
        raise AttributeError(f"module 'tether.governance' has no attribute {name!r}")
    from tether.governance import decide

    value = getattr(decide, name)
    globals()[name] = value
    return value


__all__ = ["decide_answers", "decide_approval", "default_decided_by"]
