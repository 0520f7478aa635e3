"""What a running tool can see: its call, the agent, session state and the cancel signal."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tether.errors import SessionStateError
from tether.messages import JSONValue, ToolCall

if TYPE_CHECKING:
    from tether.agent import Agent
    from tether.control.interrupts import Interrupter


class CancelSignal:
    """A thread-safe flag a tool polls to stop early when the run is cancelled."""

    __slots__ = ("_event", "_flag")

    def __init__(self) -> None:
        self._flag = False
        self._event: threading.Event | None = None  # created only for wait()

    @property
    def cancelled(self) -> bool:
        return self._flag

    def set(self) -> None:
        self._flag = True
        with _EVENT_LOCK:
            if self._event is not None:
                self._event.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block up to ``timeout`` seconds; True when cancelled."""
        with _EVENT_LOCK:
            if self._event is None:
                self._event = threading.Event()
                if self._flag:
                    self._event.set()
            event = self._event
        return event.wait(timeout)


_EVENT_LOCK = threading.Lock()


@dataclass(slots=True)
class ToolContext:
    """Injected into a tool that declares a parameter annotated ``ToolContext``.

    ``state`` is the agent's session state (a JSON-serializable dict shared by
    every tool of the session); ``cancel`` is set when the run is cancelled.
    """

    tool_call: ToolCall
    agent: Agent
    state: dict[str, Any]
    cancel: CancelSignal
    interrupter: Interrupter | None = None

    def interrupt(self, name: str, reason: JSONValue = None) -> JSONValue:
        """Suspend the run and ask ``name`` (showing ``reason``); returns the answer on resume.

        The first call raises ``InterruptSignal`` (a BaseException: do not catch it);
        after ``agent.resume({interrupt_id: answer})`` the tool runs again from the
        start and this call returns ``answer``. Other tools of the batch are not re-run.
        """
        if self.interrupter is None:
            raise SessionStateError(
                "ToolContext.interrupt() is only available while the agent runs"
            )
        return self.interrupter(name, reason)

    @property
    def tool_call_id(self) -> str:
        return self.tool_call.id
