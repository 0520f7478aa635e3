"""The summarising manager: a model writes a summary of the middle of the conversation."""

from __future__ import annotations

import json
import logging
from contextlib import aclosing

from tether.context.compaction import SUMMARY_MARK, Compaction
from tether.context.estimate import Counter
from tether.context.policy import ContextManager, ContextRequest, _counter, _fraction, _positive
from tether.context.todo_note import without_todo_note
from tether.errors import ModelError
from tether.messages import Message, TextBlock, ToolCall, ToolResult
from tether.models.base import Model, ModelRequest

log = logging.getLogger("tether.context")

SUMMARY_SYSTEM = (
    "You compress the history of a conversation between a user, an AI assistant and its "
    "tools. Write a faithful, dense summary that lets the assistant continue the task: the "
    "user's goals and constraints, decisions made, facts and figures learned from tools "
    "(with their values), files or resources touched, open questions and what was about "
    "to happen next. Do not invent anything. Do not address the user. Plain text only."
)

RESULT_CHARS = 2_000
"""A tool result longer than this is cut in the transcript given to the summariser."""


class Summarizing(ContextManager):
    """Replace the middle of the conversation with a summary written by a model.

    Keeps the system prompt, the first user message and the most recent messages
    (``keep_recent`` at least, more when they fit the target; after a provider's
    overflow error only what fits) verbatim. ``model``
    writes the summary (default: the agent's own; a cheaper one can be given).
    A later compression summarises the previous summary together with the newly
    removed messages, so there is never more than one summary in the view.
    The summarising call with the agent's own model goes through the agent's
    model middleware; it does not run the BeforeModelCall / AfterModelCall hooks
    (it sends only messages the model has already been sent; a different
    summariser model receives them too). When
    the summarising call fails, the messages are dropped as by a sliding window
    and the marker says so (the run goes on; the transcript keeps everything).
    ``count``: an exact token counter for the estimates (default: the heuristic).
    """

    def __init__(
        self,
        model: Model | None = None,
        *,
        keep_recent: int = 6,
        threshold: float = 0.8,
        target: float = 0.5,
        max_summary_tokens: int = 2_000,
        count: Counter | None = None,
    ) -> None:
        self.model = model
        self.count = _counter("Summarizing", count)
        self.keep_recent = _positive("Summarizing", "keep_recent", keep_recent) or 1
        self.threshold = _fraction("Summarizing", "threshold", threshold)
        self.target = _fraction("Summarizing", "target", target)
        self.max_summary_tokens = (
            _positive("Summarizing", "max_summary_tokens", max_summary_tokens) or 1
        )

    async def compress(self, request: ContextRequest) -> Compaction | None:
        first = request.estimate(request.messages[0]) if request.messages else 0
        allowance = min(self.max_summary_tokens, request.target // 4)
        budget = max(0, request.target - first - allowance)
        # a provider's refusal outranks keep_recent: keep what fits, at least the last turn
        keep = 1 if request.reason == "overflow" else self.keep_recent
        end = request.cut_for(budget, keep)
        if end is None:
            return None
        previous = request.compaction
        begin = request.head
        earlier = ""
        if previous is not None and previous.summary is not None and previous.start == begin:
            earlier = without_todo_note(previous.summary.text)  # a stale list stays out
            begin = previous.end
        transcript = render(request.messages[begin:end], request.window)
        model = self.model or request.model
        try:
            text = await summarise(model, earlier, transcript, request)
        except Exception as exc:  # the run goes on without a summary
            log.warning(
                "summarising call failed (%s: %s); dropping the messages instead",
                type(exc).__name__,
                exc,
            )
            text = (
                f"(No summary: the summarising call failed: {type(exc).__name__}. "
                f"{end - request.head} earlier message(s) were left out.)"
            )
        summary = Message.user(
            f"{SUMMARY_MARK}\nMessages {request.head + 1}-{end} of the conversation, "
            f"summarised (the full transcript is kept in the session journal):\n{text}"
        )
        return Compaction(request.head, end, summary)


def render(messages: list[Message], window: int) -> str:
    """The messages as a plain transcript for the summariser, bounded in size."""
    lines: list[str] = []
    for message in messages:
        for block in message.content:
            if type(block) is TextBlock and block.text:
                lines.append(f"{message.role}: {block.text}")
            elif type(block) is ToolCall:
                args = json.dumps(block.arguments, ensure_ascii=False, default=str)
                lines.append(f"assistant called {block.name}({args})")
            elif type(block) is ToolResult:
                content = block.content
                if len(content) > RESULT_CHARS:
                    content = (
                        content[:RESULT_CHARS] + f" ...[{len(content) - RESULT_CHARS} chars cut]"
                    )
                flag = " (error)" if block.is_error else ""
                lines.append(f"tool {block.name}{flag}: {content}")
    text = "\n".join(lines)
    limit = window * 2  # about half the window in characters
    if len(text) > limit:
        half = limit // 2
        text = text[:half] + "\n...[middle of the transcript cut]...\n" + text[-half:]
    return text


async def summarise(model: Model, earlier: str, transcript: str, request: ContextRequest) -> str:
    """Ask ``model`` for the summary text (its usage counts in the run's usage)."""
    from tether.modelcall import stream_model
    from tether.models.base import ModelResponse

    prompt = ""
    if earlier:
        prompt += f"Summary so far:\n{earlier}\n\n"
    prompt += f"Conversation to add to the summary:\n{transcript}\n\nWrite the updated summary."
    summary_request = ModelRequest([Message.user(prompt)], [], SUMMARY_SYSTEM)
    response: ModelResponse | None = None
    onion = request.model_onion if model is request.model else None
    if onion is not None:  # the agent's model middleware (e.g. redaction) applies here too
        summary_request = await onion.prepare(summary_request)
        stream = onion.call(summary_request)
    else:
        stream = stream_model(model, summary_request)
    async with aclosing(stream) as items:
        async for item in items:
            if isinstance(item, ModelResponse):
                response = item
    if response is None:
        raise ModelError(f"the summariser {model.name!r} produced no response")
    if onion is not None:
        response = await onion.finish(response)
    request.usage.add_model_call(response.usage)
    text = response.message.text.strip()
    if not text:
        raise ModelError(f"the summariser {model.name!r} returned no text")
    return text
