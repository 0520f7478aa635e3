"""The loop's side of durability: journal each step's delta, fold a journal back into a session.

Entry kinds and their data (all JSON, versioned by ``Entry.schema``):

- ``message``: ``{"message": Message.to_dict()}``; an assistant message with tool
  calls opens a batch, the following ``tool`` message closes it. An assistant message
  whose model call needed provider retries or fallbacks also has ``"failover":
  {"retries": [...], "fallbacks": [...]}`` (see :mod:`tether.failover`).
- ``tool_intent``: ``{"call_id", "name"}``, written (durably for non-idempotent
  tools) right before the tool's side effect; an intent without a result after a
  crash is *in doubt*. ``name`` is the tool that runs; when the call that runs differs
  from the model's, also ``"ran": {"arguments", "by"}``: the arguments that run and
  who changed them, in order (``transform:LABEL`` a policy's Transform, ``edit`` an
  approver's edit, ``hook`` another BeforeToolCall hook, ``middleware`` tool
  middleware); the views show it (:mod:`tether.governance.redaction`).
- ``tool_result``: ``{"result": ToolResult}`` as soon as one call of a batch ends.
- ``interrupt_raised``: ``{"interrupts": [...], "stop_reason"}`` (durable).
- ``interrupt_answered``: ``{"answers": {id: value}}``, committed with the resumed run's
  next write, before anything re-runs: in the fsync'd commit of a non-idempotent
  call's intent; fsync'd on its own only when answers are left pending.
- ``state``: ``{"state": {...}}`` or, when smaller, ``{"delta": ...}`` (see
  ``tether.state_delta``) when the session state changed.
- ``status``: ``{"status", "reason"}``, and ``"stop_reason"`` at the end of a run that
  did not suspend (a sub-agent's parent, recovering, reads how it stopped); a run's start ``{"status": "running",
  "started_at", "by" (lease holder), "resume", "model" (the agent's model name)}``; ``usage``: ``{"usage": RunUsage.to_dict()}``.
- ``compaction``: ``Compaction.to_dict()`` plus ``reason``, ``manager`` (its class
  name), ``tokens_before``, ``tokens_after``: the model's view of the transcript from now on (the
  messages themselves stay in the journal).
- ``system_prompt``: ``{"system_prompt": str | None}``, the session's system prompt
  (written when a run first sends it or sends a different one).
- ``snapshot``: the whole fold (see :meth:`SessionView.to_snapshot`).

The fold is :mod:`tether.journal_fold`, the writer :mod:`tether.journal_writer`, a run's
end :mod:`tether.journal_end`; their names are importable from here.
"""

from __future__ import annotations

from tether.journal_end import SNAPSHOT_EVERY, journal_end, journal_suspend
from tether.journal_fold import IN_DOUBT, SessionView, fold
from tether.journal_writer import SessionJournal, SessionObserver

__all__ = [
    "IN_DOUBT",
    "SNAPSHOT_EVERY",
    "SessionJournal",
    "SessionObserver",
    "SessionView",
    "fold",
    "journal_end",
    "journal_suspend",
]
