"""Canonical messages: roles, content blocks, tool calls and results, token usage.

Every provider adapter converts to and from these types, and the durable journal
persists them, so they round-trip through JSON without loss
(``Message.from_dict(m.to_dict()) == m``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal, TypeAlias

from tether.errors import InputError

Role: TypeAlias = Literal["system", "user", "assistant", "tool"]
JSONValue: TypeAlias = Any
"""A value made only of dict (str keys), list, str, int, float, bool and None."""

_REPLACEMENT = "\ufffd"


def sanitize_text(text: str) -> str:
    """Replace lone surrogate code points (invalid in UTF-8) with U+FFFD."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join(_REPLACEMENT if 0xD800 <= ord(ch) <= 0xDFFF else ch for ch in text)
    return text


def sanitize_json(value: JSONValue) -> JSONValue:
    """Apply :func:`sanitize_text` to every string (keys included) inside a JSON value."""
    if isinstance(value, str):
        return sanitize_text(value)
    if isinstance(value, dict):
        return {sanitize_text(str(k)): sanitize_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [sanitize_json(v) for v in value]
    return value


@dataclass(slots=True)
class TextBlock:
    """Plain text shown to (or written by) the model."""

    text: str
    type: Literal["text"] = "text"


@dataclass(slots=True)
class ReasoningBlock:
    """Model reasoning; never part of the user-visible text.

    ``signature`` carries a provider's opaque verification token, ``redacted``
    marks reasoning the provider returned only in encrypted form (kept in ``signature``).
    """

    text: str
    signature: str | None = None
    redacted: bool = False
    type: Literal["reasoning"] = "reasoning"


@dataclass(slots=True)
class ToolCall:
    """A request from the model to run a tool with JSON arguments."""

    id: str
    name: str
    arguments: dict[str, JSONValue] = field(default_factory=dict)
    type: Literal["tool_call"] = "tool_call"


@dataclass(frozen=True, slots=True)
class Image:
    """An image attached to a tool result: ``media_type`` (``image/png``, ``image/jpeg``,
    ``image/gif`` or ``image/webp``: what the providers accept) and base64 ``data``."""

    media_type: str
    data: str

    def to_dict(self) -> dict[str, str]:
        return {"media_type": self.media_type, "data": self.data}


@dataclass(slots=True)
class ToolResult:
    """The outcome of one tool call, as the model will see it.

    ``content`` is the text given to the model (JSON text for structured values;
    lone surrogates replaced, as in model output and user input);
    ``is_error`` tells the model the call failed; ``status`` says why in a word
    (``ok``, ``error``, ``denied``, ``cancelled``, ``timeout``). ``images``: images the
    tool returned (a :class:`tether.tools.ToolOutput`), passed to providers in the form
    each accepts; ``content`` names them too, for text-only views.
    """

    tool_call_id: str
    name: str
    content: str
    is_error: bool = False
    status: str = "ok"
    type: Literal["tool_result"] = "tool_result"
    images: tuple[Image, ...] = ()

    def __post_init__(self) -> None:
        # Every result (a tool's value, an exception's message, a hook's replacement)
        # must encode as UTF-8 for the provider request and the journal.
        if isinstance(self.content, str):  # a corrupt journal may hold anything
            self.content = sanitize_text(self.content)


ContentBlock: TypeAlias = TextBlock | ReasoningBlock | ToolCall | ToolResult

_BLOCK_TYPES: dict[str, type[ContentBlock]] = {
    "text": TextBlock,
    "reasoning": ReasoningBlock,
    "tool_call": ToolCall,
    "tool_result": ToolResult,
}


@dataclass(slots=True)
class Usage:
    """Token counts of one model call (or a sum of several)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    """How many of ``output_tokens`` were reasoning (0 when the provider does not say)."""
    cost: Decimal | None = None
    """USD of the call at the genai-prices price of its model (None when unknown)."""

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def add(self, other: Usage) -> None:
        """Add ``other`` into this usage in place."""
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_read_tokens += other.cache_read_tokens
        self.cache_write_tokens += other.cache_write_tokens
        self.reasoning_tokens += other.reasoning_tokens
        self.cost = add_cost(self.cost, other.cost)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
        }
        if self.reasoning_tokens:  # only when a provider said (journals stay as they were)
            out["reasoning_tokens"] = self.reasoning_tokens
        if self.cost is not None:  # a string: exact in JSON, absent when unknown
            out["cost"] = str(self.cost)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Usage:
        return cls(
            input_tokens=int(data.get("input_tokens", 0)),
            output_tokens=int(data.get("output_tokens", 0)),
            cache_read_tokens=int(data.get("cache_read_tokens", 0)),
            cache_write_tokens=int(data.get("cache_write_tokens", 0)),
            reasoning_tokens=int(data.get("reasoning_tokens", 0)),
            cost=read_cost(data.get("cost")),
        )


def add_cost(total: Decimal | None, cost: Decimal | None) -> Decimal | None:
    """The sum of two costs; unknown (None) adds nothing, and None + None stays None."""
    if cost is None:
        return total
    return cost if total is None else total + cost


def read_cost(value: Any) -> Decimal | None:
    """A journaled cost (a decimal string), None if absent or not a finite number."""
    if value is None or isinstance(value, bool):
        return None
    try:
        cost = Decimal(str(value))
    except ArithmeticError:
        return None
    return cost if cost.is_finite() else None


@dataclass(slots=True)
class Message:
    """One conversation message: a role and a list of content blocks."""

    role: Role
    content: list[ContentBlock] = field(default_factory=list)
    usage: Usage | None = None

    @classmethod
    def user(cls, text: str) -> Message:
        """A user message holding ``text`` (lone surrogates replaced)."""
        return cls("user", [TextBlock(sanitize_text(text))])

    @classmethod
    def assistant(cls, text: str) -> Message:
        return cls("assistant", [TextBlock(sanitize_text(text))])

    @property
    def text(self) -> str:
        """The concatenated text blocks (reasoning excluded)."""
        return "".join(b.text for b in self.content if type(b) is TextBlock)

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [b for b in self.content if type(b) is ToolCall]

    @property
    def tool_results(self) -> list[ToolResult]:
        return [b for b in self.content if type(b) is ToolResult]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; :meth:`from_dict` restores an equal message."""
        data: dict[str, Any] = {
            "role": self.role,
            "content": [_block_to_dict(b) for b in self.content],
        }
        if self.usage is not None:
            data["usage"] = self.usage.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Message:
        role = data.get("role")
        if role not in ("system", "user", "assistant", "tool"):
            raise InputError(f"message role must be system, user, assistant or tool, got {role!r}")
        usage = data.get("usage")
        return cls(
            role=role,
            content=[_block_from_dict(b) for b in data.get("content", [])],
            usage=Usage.from_dict(usage) if usage is not None else None,
        )


def _block_to_dict(block: ContentBlock) -> dict[str, Any]:
    if type(block) is TextBlock:
        return {"type": "text", "text": block.text}
    if type(block) is ReasoningBlock:
        return {
            "type": "reasoning",
            "text": block.text,
            "signature": block.signature,
            "redacted": block.redacted,
        }
    if type(block) is ToolCall:
        return {
            "type": "tool_call",
            "id": block.id,
            "name": block.name,
            "arguments": block.arguments,
        }
    if type(block) is ToolResult:
        data = {
            "type": "tool_result",
            "tool_call_id": block.tool_call_id,
            "name": block.name,
            "content": block.content,
            "is_error": block.is_error,
            "status": block.status,
        }
        if block.images:
            data["images"] = [image.to_dict() for image in block.images]
        return data
    raise InputError(f"not a content block: {block!r}")


def _block_from_dict(data: dict[str, Any]) -> ContentBlock:
    kind = data.get("type")
    block_type = _BLOCK_TYPES.get(kind) if isinstance(kind, str) else None
    if block_type is None:
        raise InputError(
            f"unknown content block type {kind!r}; expected one of {sorted(_BLOCK_TYPES)}"
        )
    fields = {k: v for k, v in data.items() if k != "type"}
    if block_type is ToolCall:
        fields["arguments"] = dict(fields.get("arguments") or {})
    elif "images" in fields:
        fields["images"] = _images_from(fields["images"])
    return block_type(**fields)


def _images_from(data: Any) -> tuple[Image, ...]:
    if not isinstance(data, list) or not all(
        isinstance(d, dict)
        and isinstance(d.get("media_type"), str)
        and isinstance(d.get("data"), str)
        for d in data
    ):
        raise InputError(
            "a tool result's images must be a list of {'media_type': str, 'data': base64 str}"
        )
    return tuple(Image(d["media_type"], d["data"]) for d in data)
