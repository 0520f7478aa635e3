"""The Model protocol: one request in, a stream of normalized events out."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from tether.events import ModelStopReason, ModelStreamEvent
from tether.messages import Message, ToolCall, Usage


@dataclass(slots=True)
class ModelRequest:
    """What the loop sends to a model: conversation, tool specs, system prompt."""

    messages: list[Message]
    tool_specs: list[dict[str, Any]]
    system_prompt: str | None = None
    invocation: int | None = None
    """Which agent invocation the call belongs to (unique per process), so a model
    can keep per-invocation choices such as a FallbackChain's current model."""
    max_tokens: int | None = None
    """Output token limit for this call only (None: the model's own setting); the loop
    raises it once to retry a reply cut off inside a tool call's arguments."""
    output_schema: dict[str, Any] | None = None
    """The JSON schema of the invocation's ``output_type`` (a provider with native
    structured output constrains its answer to it; the loop validates it anyway)."""
    output_name: str = "output"
    """A name for that schema (letters, digits, ``_`` and ``-``)."""
    tool_choice: str | None = None
    """This call's tool choice (None: the provider's default, ``auto``): ``"auto"`` (the
    model decides), ``"required"`` (it must call a tool), ``"none"`` (it must not) or
    the name of one offered tool (it must call that one). A BeforeModelCall hook sets it."""


TOOL_CHOICES = ("auto", "required", "none")
"""The tool choices besides a tool's name (see ``ModelRequest.tool_choice``)."""


@dataclass(slots=True)
class ModelResponse:
    """A complete model response assembled from its stream.

    ``argument_errors`` maps a tool call id to the reason its arguments could not
    be parsed (the call then gets an error result instead of running).
    """

    message: Message
    stop_reason: ModelStopReason
    usage: Usage
    argument_errors: dict[str, str] = field(default_factory=dict)

    @property
    def tool_calls(self) -> list[ToolCall]:
        return self.message.tool_calls


@runtime_checkable
class Model(Protocol):
    """A chat model. ``stream`` yields deltas and ends with exactly one ``ModelStop``."""

    @property
    def name(self) -> str:
        """A short label such as ``openai:gpt-4.1`` for logs and errors."""
        ...

    def stream(self, request: ModelRequest) -> AsyncGenerator[ModelStreamEvent, None]: ...
