"""Hook registration and dispatch: priorities, registration order, sync and async callbacks."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from enum import IntEnum
from typing import Any, Protocol, TypeVar, runtime_checkable

from tether.control.events import HookEvent
from tether.control.interrupts import InterruptSignal
from tether.errors import ConfigurationError, HookError, RunError

E = TypeVar("E", bound=HookEvent)
HookCallback = Callable[[E], None] | Callable[[E], Awaitable[None]]


class HookOrder(IntEnum):
    """Priority of a callback: lower runs first (After* events reverse within a priority)."""

    SDK_FIRST = 0
    INTERVENTION_OUTPUT = 100
    DEFAULT = 500
    INTERVENTION_INPUT = 900
    SDK_LAST = 1000


@runtime_checkable
class HookProvider(Protocol):
    """Bundles callbacks: ``register_hooks`` adds them to the registry it is given."""

    def register_hooks(self, registry: HookRegistry) -> None: ...


class _Entry:
    __slots__ = ("callback", "is_async", "name", "order", "seq")

    def __init__(self, callback: Callable[..., Any], order: int, seq: int) -> None:
        self.callback = callback
        self.is_async = inspect.iscoroutinefunction(callback) or inspect.iscoroutinefunction(
            getattr(callback, "__call__", None)  # noqa: B004 - async __call__ on callable objects
        )
        self.order = order
        self.seq = seq
        self.name = getattr(callback, "__qualname__", None) or repr(callback)


class HookRegistry:
    """Callbacks per event type, kept sorted so dispatch is a plain loop."""

    def __init__(self) -> None:
        self._entries: dict[type[HookEvent], list[_Entry]] = {}
        self._sorted: dict[type[HookEvent], tuple[_Entry, ...]] = {}
        self._seq = 0
        self.agent_hooks_host: HookProvider | None = None
        """The AGENT-HOOKS host registered here (an agent takes one; the host refuses a second)."""

    def add(
        self,
        event_type: type[E],
        callback: Callable[[E], Any],
        order: int = HookOrder.DEFAULT,
    ) -> None:
        """Call ``callback(event)`` for every ``event_type`` event, at priority ``order``."""
        if not (isinstance(event_type, type) and issubclass(event_type, HookEvent)):
            raise ConfigurationError(
                f"hooks.add expects a hook event type such as BeforeToolCall, got {event_type!r}"
            )
        if event_type is HookEvent:
            raise ConfigurationError(
                "register for a concrete hook event type, not HookEvent itself"
            )
        if not callable(callback):
            raise ConfigurationError(
                f"hook callback for {event_type.__name__} is not callable: {callback!r}"
            )
        self._seq += 1
        entries = self._entries.setdefault(event_type, [])
        entries.append(_Entry(callback, int(order), self._seq))
        if event_type.REVERSE:
            key = sorted(entries, key=lambda e: (e.order, -e.seq))
        else:
            key = sorted(entries, key=lambda e: (e.order, e.seq))
        self._sorted[event_type] = tuple(key)

    @property
    def version(self) -> int:
        """Grows with every callback added (a copy made at one version stays current
        while it does not move)."""
        return self._seq

    def copy(self) -> HookRegistry:
        """A registry with the same callbacks; what is added to either stays its own."""
        twin = HookRegistry()
        twin._entries = {kind: list(entries) for kind, entries in self._entries.items()}
        twin._sorted = dict(self._sorted)
        twin._seq = self._seq
        twin.agent_hooks_host = self.agent_hooks_host
        return twin

    def add_provider(self, provider: HookProvider) -> None:
        """Let ``provider`` register its callbacks."""
        if not isinstance(provider, HookProvider):
            raise ConfigurationError(
                f"hooks=[...] takes HookProvider objects (with register_hooks(registry)), "
                f"got {type(provider).__name__}"
            )
        provider.register_hooks(self)

    def has(self, event_type: type[HookEvent]) -> bool:
        """True when at least one callback listens to ``event_type``."""
        return event_type in self._sorted

    def callbacks(self, event_type: type[HookEvent]) -> list[Callable[..., Any]]:
        """The callbacks for ``event_type`` in dispatch order."""
        return [e.callback for e in self._sorted.get(event_type, ())]

    async def emit(self, event: E) -> E:
        """Run every callback for ``type(event)`` in order; return the event.

        A callback that interrupts does not stop the others: every interrupt raised
        during one emission is re-raised at the end as one signal (one suspension asks
        them all). tether's own run errors (``RunError``) pass through unchanged; any
        other exception becomes a ``HookError`` naming the hook.
        """
        entries = self._sorted.get(type(event))
        if entries is None:
            return event
        interrupted: list[tuple[_Entry, InterruptSignal]] | None = None
        for entry in entries:
            try:
                outcome = entry.callback(event)
                if entry.is_async or (outcome is not None and inspect.isawaitable(outcome)):
                    await outcome
            except RunError:
                raise
            except InterruptSignal as signal:
                interrupted = [*(interrupted or ()), (entry, signal)]
            except Exception as exc:
                err = HookError(
                    f"hook {entry.name!r} raised {type(exc).__name__} during "
                    f"{type(event).__name__}: {exc}"
                )
                raise err from exc
        if interrupted is not None:
            raise _joined(interrupted, event)
        return event

    def emit_sync(self, event: HookEvent) -> None:
        """Dispatch from synchronous code (AgentInitialized); async callbacks are refused."""
        entries = self._sorted.get(type(event), ())
        for entry in entries:  # refuse before any callback runs
            if entry.is_async:
                raise _sync_only(entry, event, "is async")
        for entry in entries:
            try:
                outcome = entry.callback(event)
            except Exception as exc:
                raise HookError(
                    f"hook {entry.name!r} raised {type(exc).__name__} during "
                    f"{type(event).__name__}: {exc}"
                ) from exc
            if inspect.isawaitable(outcome):  # e.g. a lambda returning a coroutine
                if inspect.iscoroutine(outcome):
                    outcome.close()  # never awaited: close it instead of leaking a warning
                raise _sync_only(entry, event, "returned an awaitable")


def _joined(raised: list[tuple[_Entry, InterruptSignal]], event: HookEvent) -> InterruptSignal:
    """One signal for the interrupts several hooks raised at one point; two hooks asking
    under the same name (the same id: one answer would answer both) are refused."""
    if len(raised) > 1:
        askers: dict[str, _Entry] = {}
        for entry, signal in raised:
            for interrupt in signal.interrupts:
                first = askers.setdefault(interrupt.id, entry)
                if first is not entry:
                    raise HookError(
                        f"hooks {first.name!r} and {entry.name!r} both raised interrupt "
                        f"{interrupt.name!r} during {type(event).__name__}: one answer would "
                        "answer both questions; give each interrupt its own name"
                    )
    return InterruptSignal.joined([signal for _, signal in raised])


def _sync_only(entry: _Entry, event: HookEvent, problem: str) -> ConfigurationError:
    return ConfigurationError(
        f"hook {entry.name!r} for {type(event).__name__} {problem}, but this event "
        "fires from synchronous code (Agent.__init__); make the callback a plain function"
    )
