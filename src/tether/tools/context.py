"""What a running tool can see: its call, the agent, session state and the cancel signal."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tether.messages import ToolCall

if TYPE_CHECKING:
    from tether.agent import Agent


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

    @property
    def tool_call_id(self) -> str:
        return self.tool_call.id
