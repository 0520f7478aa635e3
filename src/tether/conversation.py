"""The conversation an Agent carries between invocations, apart from its configuration."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tether.messages import JSONValue, Message

if TYPE_CHECKING:
    from tether.context.compaction import Compaction
    from tether.context.estimate import Estimator
    from tether.result import Result
    from tether.run_state import RunState
    from tether.session import SessionView
    from tether.structured import OutputSpec
    from tether.suspension import Suspension


@dataclass(slots=True, eq=False)
class Conversation:
    """Everything one session holds: owned by the loop, persistence and resume code.

    ``Agent.messages``, ``Agent.state``, ``Agent.answers`` and ``Agent.last_result``
    are views of these fields. ``synced_version`` and ``synced_state`` record what
    this copy matches in the session journal (``-1`` / ``None``: unknown, reload).
    """

    session_id: str
    messages: list[Message] = field(default_factory=list)
    state: dict[str, Any] = field(default_factory=dict)
    answers: dict[str, JSONValue] = field(default_factory=dict)
    """Answers given to interrupts of this session, by interrupt id."""
    suspension: Suspension | None = None
    """Where a suspended run stopped (None unless the last run stopped with interrupt/paused)."""
    last_result: Result | None = None
    run: RunState | None = None
    """The invocation extending this conversation right now (None between invocations)."""
    synced_version: int = -1
    synced_state: str | None = None
    compaction: Compaction | None = None
    """What the model sees of ``messages`` (None: all of it); see tether.context."""
    system_prompt: str | None = None
    """The session's system prompt as journaled (``system_prompt_known``: one was)."""
    system_prompt_known: bool = False
    estimate: Estimator | None = None
    """The running token estimate of the model's view (in memory only; rebuilt on load)."""
    output_spec: OutputSpec | None = None
    """The output type of the current (or suspended) invocation, if it has one."""
    follow_up: Any = None
    """A prompt an AfterInvocation hook set as ``resume``: the next invocation to start."""
    steering: deque[str] = field(default_factory=deque)
    """Guidance from ``Agent.steer`` not yet delivered (a deque: thread-safe appends)."""

    def clear(self, session_id: str) -> None:
        """Forget everything: a fresh conversation under ``session_id``."""
        self.session_id = session_id
        self.messages = []
        self.state = {}
        self.answers = {}
        self.suspension = None
        self.last_result = None
        self.synced_version = -1
        self.synced_state = None
        self.compaction = None
        self.system_prompt = None
        self.system_prompt_known = False
        self.estimate = None
        self.output_spec = None
        self.steering.clear()

    def adopt(self, view: SessionView) -> None:
        """Take the journal's fold as this conversation (a newer version was found)."""
        from tether.suspension import Suspension

        self.messages = view.messages
        self.state = view.state
        self.answers = view.answers
        self.suspension = view.suspension
        self.compaction = view.compaction
        self.system_prompt = view.system_prompt
        self.system_prompt_known = view.system_prompt_known
        self.estimate = None
        if view.status == "running" and not view.messages:
            self.suspension = None  # it died before saving its prompt: nothing to continue
        elif view.status == "running":  # the last run's process died: recover on resume()
            # still pending: the calls a targeted resume held back (in-doubt ones are
            # asked again by the resume itself)
            waiting = [
                i for i in view.interrupts if i.id not in view.answers and i.source != "in_doubt"
            ]
            self.suspension = Suspension(waiting, view.pending, view.position, "paused")
            self.suspension.in_doubt = [c.id for c in view.in_doubt()]
            self.suspension.recovered = True
