"""What a running tool can see: its call, the agent, session state and the cancel signal;
and its way to put events into the agent's stream while it runs."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tether.errors import InputError, SessionStateError
from tether.events import FinalResult, ToolProgress
from tether.messages import JSONValue, ToolCall

if TYPE_CHECKING:
    from tether.agent_ref import AgentRef
    from tether.control.interrupts import Interrupter
    from tether.events import StreamEvent
    from tether.tools.channel import Outlet


class CancelSignal:
    """A thread-safe flag a tool polls to stop early when the run is cancelled."""

    __slots__ = ("_event", "cancelled")

    def __init__(self) -> None:
        self.cancelled = False
        """Whether the run was cancelled (read it; :meth:`set` is what cancels). A plain
        attribute, not a property: the loop reads it at every step."""
        self._event: threading.Event | None = None  # created only for wait()

    def set(self) -> None:
        self.cancelled = True
        with _EVENT_LOCK:
            if self._event is not None:
                self._event.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block up to ``timeout`` seconds; True when cancelled."""
        with _EVENT_LOCK:
            if self._event is None:
                self._event = threading.Event()
                if self.cancelled:
                    self._event.set()
            event = self._event
        return event.wait(timeout)


_EVENT_LOCK = threading.Lock()
INTERRUPT_STATE_KEY = "__tether_interrupt_state__"
"""Session-state key holding the states tools saved with ``ctx.interrupt(state=...)``."""


@dataclass(slots=True)
class ToolContext:
    """Injected into a tool that declares a parameter annotated ``ToolContext``.

    ``state`` is the agent's session state (a JSON-serializable dict shared by
    every tool of the session); ``cancel`` is set when the run is cancelled.
    :meth:`progress` and :meth:`emit` put events into ``agent.stream()`` while the
    tool runs (``outlet`` is their way there; None when the call is not run by a loop).
    """

    tool_call: ToolCall
    agent: AgentRef
    state: dict[str, Any]
    cancel: CancelSignal
    interrupter: Interrupter | None = None
    outlet: Outlet | None = None

    def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> bool:
        """Report progress: a ``ToolProgress`` event in the agent's stream, yielded live.

        Thread-safe and never blocks (call it from a sync tool's thread too). When the
        stream's consumer falls behind (the channel holds ``CHANNEL_SIZE`` events), only
        this call's latest report is kept for it. Returns False when nothing will be
        yielded: the call has ended (its ``ToolFinished`` is out), or it does not run in a
        live group (outside a run, or put in by a hook in place of a tool without context).
        """
        _check_progress(self.tool_call.name, progress, total, message)
        outlet = self.outlet
        if outlet is None:
            return False
        event = ToolProgress(outlet.tool, outlet.call_id, self.agent.path, progress, total, message)
        return outlet.channel.progress(outlet, event)

    async def emit(self, event: StreamEvent) -> bool:
        """Put any stream event into the agent's stream (await it on the agent's loop).

        Waits while the stream's consumer is behind (backpressure: nothing is dropped and
        memory stays bounded). Returns False when the call has ended or runs outside a
        run. A ``FinalResult`` is refused: only the loop ends a stream.
        """
        if isinstance(event, FinalResult):
            raise InputError(
                f"tool {self.tool_call.name!r}: ctx.emit() cannot send a FinalResult (only "
                "the loop ends a stream); return the tool's result instead"
            )
        outlet = self.outlet
        if outlet is None:
            return False
        channel = outlet.channel
        if asyncio.get_running_loop() is not channel.loop:
            raise SessionStateError(
                f"tool {self.tool_call.name!r}: await ctx.emit() on the agent's event loop; "
                "from another thread or loop, report with ctx.progress() (thread-safe)"
            )
        queued = channel.offer(outlet, event)
        return await channel.emit(outlet, event) if queued is None else queued

    def interrupt(self, name: str, reason: JSONValue = None, state: JSONValue = None) -> JSONValue:
        """Suspend the run and ask ``name`` (showing ``reason``); returns the answer on resume.

        The first call raises ``InterruptSignal`` (a BaseException: do not catch it);
        after ``agent.resume({interrupt_id: answer})`` the tool runs again from the
        start and this call returns ``answer``. Other tools of the batch are not re-run.
        ``state`` (JSON) is saved with the session: the re-run reads it as
        :attr:`interrupt_state` (and sees :attr:`interrupted`) to pick up where it
        stopped; it is dropped once this call returns the answer.
        """
        if self.interrupter is None:
            raise SessionStateError(
                "ToolContext.interrupt() is only available while the agent runs"
            )
        key = self._state_key()
        if state is not None:
            _check_json(name, state)
            self.state.setdefault(INTERRUPT_STATE_KEY, {})[key] = state
        answer = self.interrupter(name, reason)  # raises the first time
        saved = self.state.get(INTERRUPT_STATE_KEY)
        if isinstance(saved, dict):
            saved.pop(key, None)
            if not saved:
                self.state.pop(INTERRUPT_STATE_KEY, None)
        return answer

    @property
    def interrupted(self) -> bool:
        """Whether this call is running again after it interrupted with saved ``state``."""
        saved = self.state.get(INTERRUPT_STATE_KEY)
        return isinstance(saved, dict) and self._state_key() in saved

    @property
    def interrupt_state(self) -> JSONValue:
        """The ``state`` this call saved when it interrupted (None if none)."""
        saved = self.state.get(INTERRUPT_STATE_KEY)
        return saved.get(self._state_key()) if isinstance(saved, dict) else None

    def _state_key(self) -> str:
        run = self.agent.conversation.run
        position = run.batch_position if run is not None else 0
        return f"{position}:{self.tool_call.id}"

    @property
    def tool_call_id(self) -> str:
        return self.tool_call.id


def _check_progress(tool: str, progress: object, total: object, message: object) -> None:
    for what, value, optional in (("progress", progress, False), ("total", total, True)):
        if (value is None and optional) or (
            isinstance(value, int | float) and not isinstance(value, bool)
        ):
            continue
        raise InputError(
            f"tool {tool!r}: ctx.progress({what}=...) takes a number"
            f"{' or None' if optional else ''}, got {value!r}"
        )
    if message is not None and not isinstance(message, str):
        raise InputError(
            f"tool {tool!r}: ctx.progress(message=...) takes a str or None, got {message!r}"
        )


def _check_json(name: str, state: JSONValue) -> None:
    from tether.control.interrupts import not_json

    problem = not_json(state)
    if problem is not None:
        raise InputError(
            f"ctx.interrupt({name!r}, state=...) must be JSON (str, int, float, bool, None, "
            f"lists and dicts) to be saved with the session: {problem}"
        )
