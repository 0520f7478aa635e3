"""The loop's context step: wrap each model call with compression and overflow recovery.

Called once per model call (``loop.py``): before the call it compresses the
model's view when the manager says so (preflight on the first call of an
invocation, then after each tool batch); when the provider answers
``context_overflow``, ``payload_too_large`` or ``long_context_tier`` it
compresses and retries. At most :data:`MAX_PASSES` compressions per model call.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import TYPE_CHECKING

from tether.context.compaction import Compaction, view_of
from tether.context.estimate import Estimator, cached_in_input, message_tokens, prompt_tokens
from tether.context.policy import ContextManager, ContextRequest, KeepAll
from tether.context.todo_note import with_todo_note
from tether.context.window import context_window, learn
from tether.control.events import BeforeContextCompression
from tether.errors import ContextError, ContextOverflowError, ModelError
from tether.events import ContextCompressed, ModelRetry, StreamEvent
from tether.messages import Message
from tether.models.failover import FailoverReason, ProviderError
from tether.tools.todo import TODO_KEY

if TYPE_CHECKING:
    from tether.models.base import ModelResponse
    from tether.run_state import RunState

MAX_PASSES = 3
"""Compressions allowed for one model call before the run fails."""
OVERFLOW = frozenset(
    {
        FailoverReason.CONTEXT_OVERFLOW,
        FailoverReason.PAYLOAD_TOO_LARGE,
        FailoverReason.LONG_CONTEXT_TIER,
    }
)


def manager_of(run: RunState) -> ContextManager:
    context = run.runtime.execution.context
    if context is not None:
        return context
    global _DEFAULT
    if _DEFAULT is None:  # built once: it holds settings only, no per-agent state
        from tether.context.summarise import Summarizing

        _DEFAULT = Summarizing()
    return _DEFAULT


_DEFAULT: ContextManager | None = None


class ContextStep:
    """The context around a run's model calls (``ModelCall`` calls it; no stream layer).

    :meth:`due` before the call says whether to :meth:`compress` first (preflight on
    an invocation's first call, then the threshold); :meth:`recovery` classifies a
    failed call (a malformed history is cleaned once per run, an overflow compresses
    via :meth:`shrink`); :meth:`calibrate` learns from the provider's reported tokens.
    """

    __slots__ = (
        "before",
        "cached_included",
        "estimator",
        "managed",
        "manager",
        "passes",
        "run",
        "window",
    )

    def __init__(self, run: RunState) -> None:
        self.run = run
        self.manager = manager_of(run)
        self.managed = not isinstance(self.manager, KeepAll)  # KeepAll: no estimate at all
        self.passes = 0
        self.before: _Pass | None = None  # the last pass before a call
        conversation = run.agent.conversation
        estimator = conversation.estimate
        if estimator is None or estimator.count is not self.manager.count:
            estimator = conversation.estimate = Estimator(self.manager.count)
        self.estimator = estimator
        self.window = 0
        # asked once per run: a missing attribute costs a caught AttributeError per getattr
        self.cached_included = cached_in_input(run.runtime.model)

    def due(self) -> str | None:
        """Bring the estimate up to date; the reason to compress before the call, if any."""
        if not self.managed:
            return None
        run = self.run
        estimator = self.estimator
        first = run.context is None
        run.context = estimator
        conversation = run.agent.conversation
        transcript = conversation.messages
        compaction = conversation.compaction
        if first:
            fixed = estimator.fixed_tokens_for(run.runtime.toolset.specs, run.system_prompt)
            if len(transcript) == 1 and compaction is None:
                # A lone prompt: no manager cuts the first user message, so there is nothing
                # to compress before this call; the provider's count sizes it (calibrate).
                estimator.defer(fixed)
                return None
            if 0 <= estimator.counted <= len(transcript):
                estimator.refix(fixed)  # a conversation this process already counted
            else:
                estimator.defer(fixed)
        self._count(transcript, compaction)
        if self.before is not None and self.before.vetoed is not None:
            return None  # a veto holds for the run: no summarising call only to be refused
        if not self.window:
            self.window = context_window(run.runtime.model)  # once per run; shrink may lower it
        view_length = len(transcript) if compaction is None else len(compaction.view(transcript))
        if not self.manager.needed(view_length, estimator.tokens, self.window):
            return None
        return "preflight" if first else "threshold"

    def _count(self, transcript: list[Message], compaction: Compaction | None) -> None:
        estimator = self.estimator
        if estimator.counted < 0:  # deferred, and no provider count came back
            estimator.full(view_of(transcript, compaction), estimator.fixed, len(transcript))
        else:
            estimator.update(transcript)

    def compress(self, reason: str) -> AsyncGenerator[StreamEvent, None]:
        """One compression pass before the call."""
        self.passes += 1
        self.before = outcome = _Pass()
        return _compress(self.run, self.manager, self.estimator, self.window, reason, outcome)

    def recovery(self, error: ModelError) -> str | None:
        """What to do about a failed call: ``clean`` (retry with a cleaned history, once per
        run), ``overflow`` (compress, then retry) or None (the error stands)."""
        rejected = _provider_error(error)
        if _malformed(rejected) and not self.run.clean_history:
            return "clean"
        if rejected is not None and rejected.reason in OVERFLOW and self.managed:
            return "overflow"
        return None

    def cleaned(self, error: ModelError) -> ModelRetry:
        """Switch the run to a cleaned history; the retry event to show."""
        rejected = _provider_error(error)
        assert rejected is not None
        self.run.clean_history = True  # once per run: the cleaned history is kept
        self.run.usage.model_retries += 1
        return ModelRetry(1, rejected.reason.value, 0.0, rejected.provider, "cleaned the history")

    async def shrink(self, error: ModelError) -> AsyncGenerator[StreamEvent, None]:
        """Compress after the provider refused the request as too large; raises
        ContextOverflowError when it cannot (too many passes, vetoed by a hook or
        intervention, nothing left to compress)."""
        run = self.run
        overflow = _provider_error(error)
        assert overflow is not None
        model = run.runtime.model
        conversation = run.agent.conversation
        if self.estimator.counted < 0:  # the refused request was never counted
            self._count(conversation.messages, conversation.compaction)
        window = learn(model, str(overflow)) or self.window or context_window(model)
        self.window = window
        self.passes += 1
        if self.passes > MAX_PASSES:
            raise ContextOverflowError(
                f"the conversation is still too long for model {model.name!r} "
                f"after {MAX_PASSES} compressions ({overflow.reason.value}); "
                "use a model with a larger context window or a SlidingWindow with a "
                "smaller max_tokens"
            ) from error
        # the provider refused: aim below what it refused
        ceiling = min(window, max(1, int(self.estimator.tokens * 0.75)))
        outcome = _Pass()
        compressing = _compress(run, self.manager, self.estimator, ceiling, "overflow", outcome)
        async with aclosing(compressing) as events:
            async for event in events:
                outcome.compressed = True
                yield event
        if outcome.vetoed is not None:  # a hook or policy kept the view: the refusal stands
            raise ContextOverflowError(
                f"model {model.name!r} refused the request ({overflow.reason.value}) and "
                f"the compression that would shrink it was vetoed ({outcome.vetoed}); let "
                "the BeforeContextCompression hook or intervention allow it, or use a model "
                "with a larger context window"
            ) from error
        if not outcome.compressed:
            raise ContextOverflowError(
                f"model {model.name!r} refused the request ({overflow.reason.value}) and "
                "there is nothing left to compress: the first user message, the system "
                "prompt, the tools and the latest turn already exceed its limit"
            ) from error

    def calibrate(self, response: ModelResponse, sent: int) -> None:
        """Learn the real size of what was sent from the provider's reported tokens."""
        if self.managed:
            reported = prompt_tokens(response.usage, self.cached_included)
            self.estimator.calibrate(reported, sent)


class _Pass:
    """What one compression pass did."""

    __slots__ = ("compressed", "vetoed")

    def __init__(self) -> None:
        self.compressed = False
        self.vetoed: str | None = None  # the veto's reason


def _provider_error(exc: BaseException) -> ProviderError | None:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ProviderError):
            return seen
        seen = seen.__cause__
    return None


def _malformed(error: ProviderError | None) -> bool:
    """A request the provider rejected as malformed (not a response tether could not read)."""
    return (
        error is not None
        and error.reason is FailoverReason.FORMAT_ERROR
        and error.status in (400, 422)
    )


def _head(messages: list[Message]) -> int:
    """Messages always kept verbatim: through the first user message."""
    for index, message in enumerate(messages):
        if message.role == "user":
            return index + 1
    return 0


def _cuts(run: RunState, floor: int) -> list[int]:
    """Where a compaction may end: never between a tool call and its result, never into
    the pending batch (whose interrupts refer to it), and always keeping the last message."""
    messages = run.agent.conversation.messages
    last = len(messages) - 1
    if run.pending is not None:
        last = min(last, run.batch_position)
    cuts: list[int] = []
    for index in range(max(floor, 2), last + 1):
        if messages[index].role == "tool":
            continue
        before = messages[index - 1]
        if before.role == "assistant" and before.tool_calls:
            continue
        cuts.append(index)
    return cuts


async def _compress(
    run: RunState,
    manager: ContextManager,
    estimator: Estimator,
    limit: int,
    reason: str,
    outcome: _Pass,
) -> AsyncGenerator[StreamEvent, None]:
    """One compression pass; yields ContextCompressed when the view changed."""
    agent = run.agent
    conversation = agent.conversation
    transcript = conversation.messages
    current = conversation.compaction
    head = _head(transcript)
    floor = head if current is None else max(head, current.end)
    count = estimator.count
    window = context_window(run.runtime.model)
    request = ContextRequest(
        messages=transcript,
        compaction=current,
        head=head,
        cuts=_cuts(run, floor + 1),
        tokens=estimator.tokens,
        window=window,
        target=max(0, int(min(limit, window) * manager.target) - estimator.fixed),
        reason=reason,
        estimate=lambda m: int(message_tokens(m, count) * estimator.ratio),
        model=run.runtime.model,
        usage=run.usage,
        model_onion=run.model_onion,
        _run=run,
    )
    if not request.cuts:
        return
    compaction = await manager.compress(request)
    if compaction is None:
        return
    todo = conversation.state.get(TODO_KEY)
    if todo is not None:  # the todo tool's list: the model's next view carries it
        compaction = with_todo_note(compaction, todo)
    if compaction == current:
        return
    _check(manager, compaction, request)
    hooks = run.runtime.hooks
    if hooks.has(BeforeContextCompression):
        before = await hooks.emit(
            BeforeContextCompression(
                agent, reason, compaction.start, compaction.end, compaction.summary
            )
        )
        if before.block:
            outcome.vetoed = before.block
            return
        compaction = Compaction(compaction.start, compaction.end, before.summary)
    tokens_before = estimator.tokens
    conversation.compaction = compaction
    view = compaction.view(transcript)
    tokens_after = estimator.full(view, estimator.fixed, len(transcript))
    usage = run.usage
    usage.compressions += 1
    usage.context_tokens_before += tokens_before
    usage.context_tokens_after += tokens_after
    if run.journal is not None:
        data = compaction.to_dict()
        data.update(
            reason=reason,
            manager=type(manager).__name__,
            tokens_before=tokens_before,
            tokens_after=tokens_after,
        )
        await run.journal.append("compaction", data)
    yield ContextCompressed(
        reason, compaction.start, compaction.end, compaction.summary, tokens_before, tokens_after
    )


def _check(manager: ContextManager, compaction: Compaction, request: ContextRequest) -> None:
    """The loop's rules, whatever the manager: a cut offered, the head kept."""
    if compaction.start != request.head or compaction.end not in request.cuts:
        raise ContextError(
            f"the context manager {type(manager).__name__} returned a compaction of messages "
            f"[{compaction.start}, {compaction.end}) that breaks the rules: it must start at "
            f"{request.head} (after the first user message) and end at one of the offered "
            f"cut points {request.cuts[:8]}{'...' if len(request.cuts) > 8 else ''} "
            "(never between a tool call and its result)"
        )
