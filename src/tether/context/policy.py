"""Context managers: decide when the model's view must shrink and what it becomes.

A manager gets a :class:`ContextRequest` (the whole transcript, the current
compaction, the estimate, the window, where it may cut) and returns a new
:class:`Compaction` or None. The loop's context step (``tether.context.step``)
enforces the rules every manager obeys: it offers only cut points that keep
each tool call with its result, never cuts into a pending batch, keeps the
first user message, and bounds the passes per model call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tether.context.compaction import OMITTED_MARK, Compaction
from tether.context.estimate import Counter
from tether.errors import ConfigurationError
from tether.messages import Message

if TYPE_CHECKING:
    from tether.control.middleware import ModelOnion
    from tether.models.base import Model
    from tether.result import RunUsage


@dataclass(slots=True)
class ContextRequest:
    """What a manager decides from.

    ``messages`` is the whole transcript; ``head`` messages (through the first user
    message) are always kept; a new compaction's ``end`` must be one of
    ``cuts`` (ascending, all > the current end). ``target`` is the size in tokens the
    view should come under. ``reason`` is ``preflight``, ``threshold`` or ``overflow``.
    ``model`` is the agent's model; a manager that calls a model itself goes through
    ``model_onion`` (the agent's model middleware, when it has some) and adds the call's
    usage to ``usage`` (the run's).
    """

    messages: list[Message]
    compaction: Compaction | None
    head: int
    cuts: list[int]
    tokens: int
    window: int
    target: int
    reason: str
    estimate: Callable[[Message], int]
    model: Model
    usage: RunUsage
    model_onion: ModelOnion | None = None
    _run: Any = None

    @property
    def run(self) -> Any:
        """Deprecated (a manager sees what it decides from, not the run's state): use
        ``model``, ``usage`` and ``model_onion``. Removed in the next release."""
        import warnings

        warnings.warn(
            "ContextRequest.run is deprecated: use ContextRequest.model, .usage and "
            ".model_onion (the run's state is not part of the context-manager contract)",
            DeprecationWarning,
            stacklevel=2,
        )
        return self._run

    def cut_for(self, budget: int, keep_messages: int = 0) -> int | None:
        """The earliest cut that leaves at most ``budget`` tokens of recent messages (and
        at least ``keep_messages`` of them, when the budget allows); None if no cut helps."""
        if not self.cuts:
            return None
        messages = self.messages
        total = 0
        index = len(messages)
        floor = self.cuts[0]
        while index > floor:
            size = self.estimate(messages[index - 1])
            if total + size > budget and len(messages) - index >= keep_messages:
                break
            total += size
            index -= 1
        for cut in self.cuts:
            if cut >= index:
                return cut
        return self.cuts[-1]


class ContextManager:
    """Base class: compress when the estimate passes ``threshold`` of the window.

    Subclasses implement :meth:`compress`; ``needed`` may add their own trigger
    (a sliding window by message count).
    """

    threshold: float = 0.8
    """Fraction of the context window at which the view is compressed."""
    target: float = 0.5
    """Fraction of the window a compression aims for (room for the next turns)."""
    count: Counter | None = None
    """An exact token counter for the estimates (e.g. :func:`tiktoken_counter`); None:
    the heuristic, calibrated from the provider's reported tokens either way."""

    def needed(self, view_length: int, tokens: int, window: int) -> bool:
        return tokens > self.threshold * window

    async def compress(self, request: ContextRequest) -> Compaction | None:
        raise NotImplementedError


def _fraction(owner: str, name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
        raise ConfigurationError(f"{owner}({name}=...) must be a number in (0, 1], got {value!r}")
    return float(value)


def _counter(owner: str, value: Counter | None) -> Counter | None:
    if value is not None and not callable(value):
        raise ConfigurationError(
            f"{owner}(count=...) must be a function text -> tokens (e.g. "
            f"tiktoken_counter()) or None, got {value!r}"
        )
    return value


def _positive(owner: str, name: str, value: int | None) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ConfigurationError(f"{owner}({name}=...) must be an int >= 1 or None, got {value!r}")
    return value


class KeepAll(ContextManager):
    """Never compress: the model sees the whole transcript (overflow errors stop the run)."""

    def needed(self, view_length: int, tokens: int, window: int) -> bool:
        return False

    async def compress(self, request: ContextRequest) -> Compaction | None:
        return None


class SlidingWindow(ContextManager):
    """Keep the first user message and the most recent messages; drop the middle.

    ``max_messages`` bounds the view by count, ``max_tokens`` by estimated tokens
    (either, both, or neither: then it acts at ``threshold`` of the window). A
    marker message says how many messages were left out. ``count``: an exact
    token counter for the estimates (default: the heuristic).
    """

    def __init__(
        self,
        max_messages: int | None = None,
        *,
        max_tokens: int | None = None,
        threshold: float = 0.8,
        target: float = 0.5,
        count: Counter | None = None,
    ) -> None:
        self.max_messages = _positive("SlidingWindow", "max_messages", max_messages)
        self.max_tokens = _positive("SlidingWindow", "max_tokens", max_tokens)
        self.threshold = _fraction("SlidingWindow", "threshold", threshold)
        self.target = _fraction("SlidingWindow", "target", target)
        self.count = _counter("SlidingWindow", count)

    def needed(self, view_length: int, tokens: int, window: int) -> bool:
        if self.max_messages is not None and view_length > self.max_messages:
            return True
        if self.max_tokens is not None and tokens > self.max_tokens:
            return True
        return tokens > self.threshold * window

    async def compress(self, request: ContextRequest) -> Compaction | None:
        budget = request.target
        if self.max_tokens is not None:  # room below max_tokens, so it does not act every turn
            budget = min(budget, int(self.max_tokens * self.target))
        end = request.cut_for(max(0, budget - request.estimate(request.messages[0])))
        if self.max_messages is not None:
            by_count = len(request.messages) - max(1, self.max_messages - request.head - 1)
            later = [c for c in request.cuts if c >= by_count]
            count_end = later[0] if later else request.cuts[-1] if request.cuts else None
            if end is None or (count_end is not None and count_end > end):
                end = count_end
        if end is None:
            return None
        omitted = end - request.head  # cumulative: everything between head and end
        marker = Message.user(
            f"{OMITTED_MARK}\n{omitted} earlier message(s) were left out to fit the context "
            "window; the full transcript is kept in the session journal."
        )
        return Compaction(request.head, end, marker)
