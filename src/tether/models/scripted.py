"""ScriptedModel: a deterministic model for tests, demos and benchmarks.

>>> model = ScriptedModel([
...     {"tool_calls": [{"name": "add", "args": {"a": 1, "b": 2}}]},
...     {"text": "The answer is 3."},
... ])

Each turn is a dict with ``text`` and/or ``tool_calls`` (each ``{"name", "args",
"id"?}``), optionally ``reasoning`` and ``stop_reason``; a plain string is a text
turn. A turn's ``usage`` (``{"input_tokens": ..., "cache_read_tokens": ...}``)
replaces the estimated counts with the ones a provider would report. Instead of a
list, pass a callable ``(messages, tool_specs) -> turn``. Text is streamed in chunks
of ``chunk_size`` characters and usage is estimated at four characters per token. Tool call ids default to ``call_<history length>_<index>``,
unique within a conversation and the same when a session is replayed elsewhere.

A list script is played by position in the conversation: on its first call, a
ScriptedModel counts how many of its turns the conversation already holds as its
first assistant messages (same text and tool calls, in order) and continues after
them, so a durable session resumed in a new process carries on where it stopped.
Each later call plays the next turn (a retried call included). A conversation
that starts with other assistant messages (another model's) starts at turn 0.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import replace
from typing import Any, TypeAlias

from tether.errors import ConfigurationError, ScriptExhaustedError
from tether.events import (
    ModelStop,
    ModelStopReason,
    ModelStreamEvent,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
)
from tether.messages import (
    Message,
    ReasoningBlock,
    TextBlock,
    ToolCall,
    ToolResult,
    Usage,
    sanitize_json,
    sanitize_text,
)
from tether.models.base import ModelRequest
from tether.models.failover import FailoverReason, ProviderError
from tether.models.resilient import check_window

Turn: TypeAlias = dict[str, Any] | str
ScriptFunction: TypeAlias = Callable[[list[Message], list[dict[str, Any]]], Turn]

_TURN_KEYS = frozenset({"text", "tool_calls", "reasoning", "stop_reason", "usage"})
_USAGE_KEYS = frozenset(
    {"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens"}
)
_CALL_KEYS = frozenset({"name", "args", "arguments", "id"})
_STOP_REASONS = frozenset({"end_turn", "tool_use", "max_tokens", "stop_sequence", "content_filter"})


class ScriptedModel:
    """A model that plays back scripted turns (see the module docstring)."""

    def __init__(
        self,
        script: Sequence[Turn] | ScriptFunction,
        *,
        chunk_size: int = 16,
        name: str = "scripted",
        context_window: int | None = None,
        overflow_at: int | None = None,
        record_requests: bool = False,
        provider: str | None = None,
    ) -> None:
        if callable(script):
            self._function: ScriptFunction | None = script
            self._turns: list[Turn] = []
        elif isinstance(script, Sequence) and not isinstance(script, str | bytes):
            self._function = None
            self._turns = list(script)
            for position, turn in enumerate(self._turns):
                _check_turn(turn, position)
        else:
            raise ConfigurationError(
                "ScriptedModel takes a list of turns or a callable (messages, tool_specs) -> turn, "
                f"got {type(script).__name__}"
            )
        if chunk_size < 1:
            raise ConfigurationError(f"ScriptedModel chunk_size must be >= 1, got {chunk_size}")
        self._chunk_size = chunk_size
        self._name = name
        self.provider = provider
        """With a provider (``"openai"``), each call is priced as that provider's model
        ``name`` (tether.pricing; scripted ``input_tokens`` leave the cache tokens out,
        as Anthropic's do); None: the calls have no cost."""
        self.context_window = check_window("ScriptedModel", context_window)
        """The window the model declares (read by tether.context)."""
        self.overflow_at = check_window("ScriptedModel", overflow_at)
        """Input tokens (four characters each) above which a call fails as a provider's
        context overflow would; the error states the limit, as OpenAI's does."""
        self.record_requests = record_requests
        self.requests: list[ModelRequest] = []
        """With ``record_requests=True``: a copy of every request the model received (for
        tests; off by default, since it grows with every call and copies the history)."""
        self.calls = 0
        """How many times the model has been called."""
        self._offset = 0  # turns the conversation already held at the first call
        self._input = _InputChars()

    @property
    def name(self) -> str:
        return self._name

    @property
    def remaining(self) -> int | None:
        """Turns left in a list script (None for a callable script)."""
        if self._function is not None:
            return None
        return max(0, len(self._turns) - self._offset - self.calls)

    async def stream(self, request: ModelRequest) -> AsyncGenerator[ModelStreamEvent, None]:
        if self.record_requests:
            self.requests.append(replace(request, messages=list(request.messages)))
        if self.overflow_at is not None:  # a whole-request count, like a provider's
            size = _estimate_input(request)
            if size > self.overflow_at:
                raise ProviderError(
                    FailoverReason.CONTEXT_OVERFLOW,
                    self._name,
                    f"This model's maximum context length is {self.overflow_at} tokens. "
                    f"However, your messages resulted in {size} tokens.",
                    status=400,
                )
        turn = self._next_turn(request)
        self.calls += 1
        if isinstance(turn, str):
            turn = {"text": turn}
        reasoning = turn.get("reasoning")
        if reasoning:
            yield ReasoningDelta(str(reasoning))
        text = turn.get("text") or ""
        size = self._chunk_size
        for start in range(0, len(text), size):
            yield TextDelta(text[start : start + size])
        calls = turn.get("tool_calls") or ()
        for index, call in enumerate(calls):
            args = call.get("args", call.get("arguments", {}))
            yield ToolCallDelta(
                index=index,
                id=call.get("id") or f"call_{len(request.messages)}_{index}",
                name=call["name"],
                arguments=args if isinstance(args, str) else dict(args),
            )
        stop: ModelStopReason = turn.get("stop_reason") or ("tool_use" if calls else "end_turn")
        out_chars = len(text) + len(str(reasoning or "")) + 24 * len(calls)
        reported = turn.get("usage")
        if reported is not None:  # the counts a provider would report, as scripted
            usage = Usage.from_dict(reported)
        else:
            usage = Usage(
                input_tokens=self._input_tokens(request), output_tokens=max(1, out_chars // 4)
            )
        if self.provider is not None:
            from tether.pricing import cost_of, look_up, looked_up

            if not looked_up(self.provider, self._name):
                await look_up(self.provider, self._name)
            usage.cost = cost_of(self.provider, self._name, usage)
        yield ModelStop(stop, usage)

    def _input_tokens(self, request: ModelRequest) -> int:
        """The request's size in tokens (4 characters each), counting new messages only."""
        chars = len(request.system_prompt or "") + self._input.of(request.messages)
        return max(1, chars // 4)

    def _next_turn(self, request: ModelRequest) -> Turn:
        if self._function is not None:
            turn = self._function(request.messages, request.tool_specs)
            _check_turn(turn, self.calls)
            return turn
        if self.calls == 0:
            self._offset = _played(self._turns, request.messages)
        position = self._offset + self.calls
        if position >= len(self._turns):
            held = (
                f" (the conversation already held its first {self._offset})" if self._offset else ""
            )
            raise ScriptExhaustedError(
                f"ScriptedModel {self._name!r} has no turn left: it was given "
                f"{len(self._turns)} turn(s){held} and this is call {self.calls + 1}. "
                "Add turns to the script, or stop the agent earlier (e.g. Limits(turns=...))."
            )
        return self._turns[position]


def _played(turns: list[Turn], messages: list[Message]) -> int:
    """How many of ``turns`` the conversation holds as its first assistant messages."""
    played = 0
    for message in messages:
        if message.role != "assistant":
            continue
        if played >= len(turns) or not _same(message, turns[played]):
            break
        played += 1
    return played


def _same(message: Message, turn: Turn) -> bool:
    """Whether ``message`` is what playing ``turn`` put into the conversation."""
    if isinstance(turn, str):
        turn = {"text": turn}
    if message.text != sanitize_text(turn.get("text") or ""):
        return False
    calls = turn.get("tool_calls") or ()
    made = message.tool_calls
    if len(made) != len(calls):
        return False
    for call, block in zip(calls, made, strict=True):
        args = call.get("args", call.get("arguments", {}))
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except ValueError:
                return False
        if block.name != call["name"] or block.arguments != sanitize_json(args):
            return False
        if call.get("id") and block.id != call["id"]:
            return False
    return True


def _check_turn(turn: Any, position: int) -> None:
    if isinstance(turn, str):
        return
    where = f"ScriptedModel turn {position}"
    if not isinstance(turn, dict):
        raise ConfigurationError(f"{where} must be a dict or a string, got {type(turn).__name__}")
    if (
        turn.keys() <= _TURN_KEYS
        and turn.keys().isdisjoint(("stop_reason", "usage"))
        and _calls_ok(turn)
    ):
        return
    unknown = set(turn) - _TURN_KEYS
    if unknown:
        raise ConfigurationError(
            f"{where} has unknown key(s) {sorted(unknown)}; allowed: {sorted(_TURN_KEYS)}"
        )
    stop = turn.get("stop_reason")
    if stop is not None and stop not in _STOP_REASONS:
        raise ConfigurationError(
            f"{where}: stop_reason {stop!r} is not one of {sorted(_STOP_REASONS)}"
        )
    usage = turn.get("usage")
    if usage is not None and (
        not isinstance(usage, dict)
        or not all(type(v) is int and v >= 0 for v in usage.values())
        or not usage.keys() <= _USAGE_KEYS
    ):
        raise ConfigurationError(
            f"{where}: usage must map {sorted(_USAGE_KEYS)} to ints >= 0, got {usage!r}"
        )
    for index, call in enumerate(turn.get("tool_calls") or ()):
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise ConfigurationError(f"{where} tool call {index} needs a 'name' string: {call!r}")
        bad = set(call) - _CALL_KEYS
        if bad:
            raise ConfigurationError(
                f"{where} tool call {index} has unknown key(s) {sorted(bad)}; "
                f"allowed: {sorted(_CALL_KEYS)}"
            )


def _calls_ok(turn: dict[str, Any]) -> bool:
    calls = turn.get("tool_calls")
    if not calls:
        return True
    for c in calls:  # a loop, not all(<genexpr>): this runs for every scripted turn
        if not (type(c) is dict and type(c.get("name")) is str and c.keys() <= _CALL_KEYS):
            return False
    return True


def _estimate_input(request: ModelRequest) -> int:
    """The whole request's size in tokens (4 characters each; a tool call counts 24)."""
    chars = len(request.system_prompt or "") + sum(_chars(m) for m in request.messages)
    return max(1, chars // 4)


class _InputChars:
    """Characters of a conversation that grows between calls, each message counted once
    (a call costs its new messages, not the history). A conversation that is not the last
    one extended (its last counted message is not where it was) is counted afresh."""

    __slots__ = ("chars", "count", "last")

    def __init__(self) -> None:
        self.count = 0
        self.chars = 0
        self.last: Message | None = None

    def of(self, messages: list[Message]) -> int:
        count = self.count
        length = len(messages)
        if 0 < count <= length and messages[count - 1] is self.last:
            chars = self.chars
        else:
            count = chars = 0
        for index in range(count, length):
            chars += _chars(messages[index])
        self.chars, self.count = chars, length
        self.last = messages[-1] if length else None
        return chars


def _chars(message: Message) -> int:
    chars = 0
    for block in message.content:
        kind = type(block)
        if kind is TextBlock or kind is ReasoningBlock:
            chars += len(block.text)  # type: ignore[union-attr]
        elif kind is ToolResult:
            chars += len(block.content)  # type: ignore[union-attr]
        elif kind is ToolCall:
            chars += 24
    return chars
