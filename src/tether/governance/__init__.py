"""Governance: the one decision path for answers to interrupts (docs/design.md s. 4, s. 8).

:func:`decide_answers` is where an answer given to a run (``agent.resume``, the worker,
``tether mcp serve``) decides the interrupt's approval row; the inbox paths (CLI, HTTP)
decide the row first through :func:`decide_approval` (``store.approvals.decide`` with
the app's agent), and the run then resumes from it. Both apply the one edit rule (``tether.agents.edits.check_edit``). This package may
import ``tether.durable``; ``tether.durable`` never imports it.
"""

from tether.governance.decide import decide_answers, decide_approval, default_decided_by

__all__ = ["decide_answers", "decide_approval", "default_decided_by"]
