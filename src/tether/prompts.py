"""What an invocation is given: a prompt (its messages) and an output type (its spec)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from tether.errors import InputError
from tether.messages import Message

if TYPE_CHECKING:
    from tether.structured import OutputSpec

Prompt: TypeAlias = str | Message | Sequence[Message]


def prompt_messages(prompt: Prompt) -> list[Message]:
    """A prompt (str, Message or list of Messages) as the messages of an invocation."""
    if isinstance(prompt, str):
        return [Message.user(prompt)]
    if isinstance(prompt, Message):
        return [prompt]
    if isinstance(prompt, Sequence) and all(isinstance(m, Message) for m in prompt):
        return [m for m in prompt if isinstance(m, Message)]
    raise InputError(
        f"a prompt is a str, a Message or a list of Messages, got {type(prompt).__name__}"
    )


def output_spec(output_type: Any) -> OutputSpec | None:
    """The spec ``output_type`` asks for (None: a plain text answer)."""
    if output_type is None:
        return None
    from tether.structured import OutputSpec

    return OutputSpec(output_type)
