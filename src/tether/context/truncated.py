"""Replies cut off at the output token limit: continue text, retry a cut tool call once."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tether.messages import Message, TextBlock

if TYPE_CHECKING:
    from tether.models.base import Model, ModelResponse

MAX_CONTINUATIONS = 2
"""Continuations asked for one reply before the run stops with ``max_tokens``."""
CONTINUE_PROMPT = (
    "[tether] Your reply was cut off at the output token limit. Continue exactly where it "
    "stopped, without repeating anything."
)
MAX_RAISED_TOKENS = 64_000


@dataclass(slots=True)
class Truncation:
    """Per-run bookkeeping of truncated replies."""

    pieces: list[Message] = field(default_factory=list)
    """Text parts of the reply being continued, in order."""
    raised: bool = False
    """Whether the output limit was already raised once in this run."""
    max_tokens: int | None = None
    """The raised output limit for the next call (None: the model's own)."""

    def will_continue(self, response: ModelResponse) -> bool:
        """Whether this reply is a cut-off text part that will be continued (bounded)."""
        return (
            response.stop_reason == "max_tokens"
            and not response.tool_calls
            and bool(response.message.text)
            and len(self.pieces) < MAX_CONTINUATIONS
        )

    def continue_text(self, response: ModelResponse) -> bool:
        """Whether to ask the model to continue this cut-off text reply (bounded)."""
        if not self.will_continue(response):
            return False
        self.pieces.append(response.message)
        return True

    def whole(self, last: Message) -> Message:
        """The reply so far, ``last`` after the parts continued (kept for :meth:`stitched`)."""
        if not self.pieces:
            return last
        text = "".join(p.text for p in [*self.pieces, last])
        return Message("assistant", [TextBlock(text)], last.usage)

    def stitched(self, last: Message) -> Message:
        """The continued reply as one assistant message (the transcript keeps the parts)."""
        message = self.whole(last)
        self.pieces = []
        return message

    def retry_cut_call(self, response: ModelResponse, model: Model) -> bool:
        """Whether to drop this reply, cut inside a tool call's arguments, and retry the call
        once with twice the model's output limit (only a model with a known int limit)."""
        if response.stop_reason != "max_tokens" or self.raised:
            return False
        if not any(c.id in response.argument_errors for c in response.tool_calls):
            return False
        limit = getattr(model, "max_tokens", None)
        if not isinstance(limit, int) or isinstance(limit, bool) or limit >= MAX_RAISED_TOKENS:
            return False  # the call's arguments then go back to the model as a tool error
        self.raised = True
        self.max_tokens = min(MAX_RAISED_TOKENS, 2 * limit)
        return True
