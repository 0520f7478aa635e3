"""One model call: hooks, middleware, streaming, bounded hook retries."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any

from tether.context.cleanup import clean_history
from tether.context.step import ContextStep
from tether.control.events import AfterModelCall, BeforeModelCall
from tether.control.interrupts import Interrupter
from tether.errors import HookError, MiddlewareError, ModelError, RetryLimitError, RunError
from tether.events import (
    ModelCallStarted,
    ModelFallback,
    ModelRetry,
    ModelStop,
    ModelStreamEvent,
    StreamEvent,
)
from tether.messages import Message, TextBlock
from tether.models.assembler import ResponseAssembler
from tether.models.base import TOOL_CHOICES, Model, ModelRequest, ModelResponse
from tether.run_state import RunState, StopRun


async def stream_model(
    model: Model, request: ModelRequest
) -> AsyncGenerator[ModelStreamEvent | ModelResponse, None]:
    """Yield the model's deltas, then the assembled ModelResponse (the onion's innermost layer)."""
    assembler = ResponseAssembler()
    add = assembler.add
    async with aclosing(model.stream(request)) as events:
        async for event in events:
            add(event)
            if type(event) is not ModelStop:
                yield event
    if assembler.stop is None:
        raise _incomplete(model, assembler)
    yield assembler.finish()


class ModelCall:
    """One model call of a run: iterate :meth:`events`; then ``response`` holds the result.

    Runs the BeforeModelCall / AfterModelCall hooks, the model middleware (when
    configured) and the hook-requested retries, bounded by ``Execution.max_retries``.
    """

    __slots__ = ("response", "run")

    def __init__(self, run: RunState) -> None:
        self.run = run
        self.response: ModelResponse | None = None

    async def events(self) -> AsyncGenerator[StreamEvent, None]:
        """The call's stream events; ``response`` is set when they end without an error."""
        run = self.run
        agent = run.agent
        hooks = run.runtime.hooks
        max_retries = run.runtime.execution.max_retries
        cancel = run.cancel
        context = run.context_step  # compression before the call, recovery after a refusal
        if context is None:
            context = run.context_step = ContextStep(run)
        context.passes = 0  # the bound on compressions is per model call
        reason = context.due()
        if reason is not None:
            async with aclosing(context.compress(reason)) as compressing:
                async for step_event in compressing:
                    yield step_event
        sent = len(run.messages)
        attempt = 0
        while True:
            attempt += 1
            if cancel.cancelled:
                raise StopRun("cancelled", "cancelled before the model call")
            compaction = agent.conversation.compaction
            messages = run.messages if compaction is None else compaction.view(run.messages)
            if run.clean_history:
                messages = clean_history(messages)
            specs = run.runtime.toolset.specs
            choice: str | None = None
            if hooks.has(BeforeModelCall):
                interrupter = Interrupter(
                    run.answers,
                    "before_model_call",
                    len(run.messages),
                    "hook",
                    session=run.session_id,
                )
                event = BeforeModelCall(
                    agent, list(messages), specs, attempt, interrupter=interrupter
                )
                before = await hooks.emit(event)
                if before.block:
                    raise StopRun("blocked", before.block)
                messages = before.messages
                choice = before.tool_choice
                if choice is not None:
                    _check_choice(choice, specs)
            yield ModelCallStarted(attempt)
            response: ModelResponse | None = None
            error: Exception | None = None
            try:
                limit = run.truncation.max_tokens
                request = ModelRequest(messages, specs, run.system_prompt, run.invocation, limit)
                if choice is not None:
                    request.tool_choice = choice
                if run.output_spec is not None:
                    request.output_schema = run.output_spec.schema
                    request.output_name = run.output_spec.schema_name
                if run.model_onion is None:  # fast path: assemble inline, no extra layer
                    assembler = ResponseAssembler()
                    add = assembler.add
                    deltas = run.runtime.model.stream(request)
                    try:  # aclosing() without its extra calls (the hot path)
                        async for delta in deltas:
                            if cancel.cancelled:
                                raise StopRun("cancelled", "cancelled during the model call")
                            add(delta)
                            if not isinstance(delta, ModelStop):
                                _count(run, delta)
                                yield delta
                    finally:
                        await deltas.aclose()
                    if assembler.stop is None:
                        raise _incomplete(run.runtime.model, assembler)
                    response = assembler.finish()
                else:
                    sink = _Response()
                    async with aclosing(_onion_items(run, request, sink)) as items:
                        async for item in items:
                            yield item
                    response = sink.response
            except StopRun:
                raise
            except Exception as exc:
                error = exc
            if response is not None:
                run.usage.add_model_call(response.usage)
            elif error is not None:
                run.usage.model_calls += 1
            if hooks.has(AfterModelCall):
                after = await hooks.emit(AfterModelCall(agent, response, error, attempt))
                if after.block:
                    raise StopRun("blocked", after.block)
                if after.retry:
                    if attempt > max_retries:
                        raise RetryLimitError(
                            f"AfterModelCall hooks asked to retry the model call {attempt} times; "
                            f"the limit is {max_retries} (Execution(max_retries=...))."
                        )
                    if after.guidance:
                        yield await run.add_message(Message("user", [TextBlock(after.guidance)]))
                    continue
                response = after.response
            if error is not None:
                failure = _failure(run.runtime.model, error)
                recovery = context.recovery(failure) if isinstance(failure, ModelError) else None
                if recovery is None:
                    raise failure
                assert isinstance(failure, ModelError)
                if recovery == "clean":
                    yield context.cleaned(failure)
                else:  # the provider refused a request too large: compress, then again
                    async with aclosing(context.shrink(failure)) as shrinking:
                        async for step_event in shrinking:
                            yield step_event
                sent = len(run.messages)
                attempt = 0
                continue
            if response is None:
                raise ModelError(f"model {run.runtime.model.name!r} produced no response")
            context.calibrate(response, sent)
            self.response = response
            return


def _check_choice(choice: object, specs: list[dict[str, Any]]) -> None:
    """Refuse a ``BeforeModelCall.tool_choice`` that no provider could send."""
    if choice in TOOL_CHOICES:
        return
    names = [spec.get("name") for spec in specs]
    if isinstance(choice, str) and choice in names:
        return
    offered = ", ".join(repr(n) for n in names) or "none"
    raise HookError(
        f"BeforeModelCall.tool_choice must be 'auto', 'required', 'none' or the name of "
        f"an offered tool ({offered}), got {str(choice)[:60]!r}"
    )


def _failure(model: Model, error: Exception) -> RunError:
    """The run error for a failed call: tether's own as it is, anything else a ModelError."""
    if isinstance(error, RunError):  # ModelError, MiddlewareError: already explained
        return error
    failure = ModelError(f"model {model.name!r} failed: {type(error).__name__}: {error}")
    failure.__cause__ = error
    return failure


class _Response:
    """Where one attempt leaves its assembled response."""

    __slots__ = ("response",)

    def __init__(self) -> None:
        self.response: ModelResponse | None = None


def _count(run: RunState, event: object) -> None:
    kind = type(event)
    if kind is ModelRetry:
        run.usage.model_retries += 1
    elif kind is ModelFallback:
        run.usage.model_fallbacks += 1
    else:
        return
    if run.journal is not None:  # only after a failed attempt: the plain path skips this
        from tether.failover import note

        note(run, event)


async def _onion_items(
    run: RunState, request: ModelRequest, sink: _Response
) -> AsyncGenerator[StreamEvent, None]:
    """The middleware chain's events; its (output-processed) response goes to ``sink``.

    A middleware's ``wrap()`` yields the result last, so each item is passed on
    only once the next one shows it was not the last.
    """
    onion = run.model_onion
    assert onion is not None
    cancel = run.cancel
    request = await onion.prepare(request)
    last: StreamEvent | ModelResponse | None = None
    async with aclosing(onion.call(request)) as items:
        async for item in items:
            if isinstance(item, ModelStop):  # the assembled response carries the stop
                continue
            if cancel.cancelled:
                raise StopRun("cancelled", "cancelled during the model call")
            _count(run, item)
            if last is not None:
                if isinstance(last, ModelResponse):
                    raise _not_last(item)
                yield last
            last = item
    if not isinstance(last, ModelResponse):
        raise _not_last(last)
    sink.response = await onion.finish(last)


def _not_last(item: object) -> MiddlewareError:
    return MiddlewareError(
        "the model middleware chain did not end with a ModelResponse "
        f"(last item: {type(item).__name__}); a middleware's wrap() must yield the result last"
    )


def _incomplete(model: Model, assembler: ResponseAssembler) -> ModelError:
    return ModelError(
        f"the stream of model {model.name!r} ended without a stop event: "
        f"{assembler.pending_description()}. The response was discarded; "
        "nothing was added to the conversation."
    )
