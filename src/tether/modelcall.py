"""One model call: hooks, middleware, streaming, bounded hook retries."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing

from tether.control.events import AfterModelCall, BeforeModelCall
from tether.control.interrupts import Interrupter
from tether.errors import ModelError, RetryLimitError
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
from tether.models.base import Model, ModelRequest, ModelResponse
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


async def call_model(run: RunState) -> AsyncGenerator[StreamEvent | ModelResponse, None]:
    """Yield stream events, then the final ModelResponse (the caller keeps it)."""
    agent = run.agent
    hooks = agent.hooks
    cancel = run.cancel
    max_retries = agent.max_retries
    attempt = 0
    while True:
        attempt += 1
        if run.cancel.cancelled:
            raise StopRun("cancelled", "cancelled before the model call")
        messages = run.messages
        specs = agent.tool_specs
        if hooks.has(BeforeModelCall):
            interrupter = Interrupter(run.answers, "before_model_call", len(messages), "hook")
            event = BeforeModelCall(agent, list(messages), specs, attempt, interrupter=interrupter)
            before = await hooks.emit(event)
            if before.block:
                raise StopRun("blocked", before.block)
            messages = before.messages
        yield ModelCallStarted(attempt)
        response: ModelResponse | None = None
        error: Exception | None = None
        try:
            request = ModelRequest(messages, specs, agent.system_prompt, run.invocation)
            if agent.model_onion is None:  # fast path: assemble inline, no extra layer
                assembler = ResponseAssembler()
                add = assembler.add
                async with aclosing(agent.model.stream(request)) as deltas:
                    async for delta in deltas:
                        if cancel.cancelled:
                            raise StopRun("cancelled", "cancelled during the model call")
                        add(delta)
                        if type(delta) is not ModelStop:
                            _count(run, delta)
                            yield delta  # type: ignore[misc]
                if assembler.stop is None:
                    raise _incomplete(agent.model, assembler)
                response = assembler.finish()
            else:
                async with aclosing(_onion_items(run, request)) as items:
                    async for item in items:
                        if type(item) is ModelResponse:
                            response = item
                        else:
                            yield item  # type: ignore[misc]
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
                        f"the limit is {max_retries} (Agent(max_retries=...))."
                    )
                if after.guidance:
                    yield await run.add_message(Message("user", [TextBlock(after.guidance)]))
                continue
            response = after.response
        if error is not None:
            if isinstance(error, ModelError):
                raise error
            raise ModelError(
                f"model {agent.model.name!r} failed: {type(error).__name__}: {error}"
            ) from error
        if response is None:
            raise ModelError(f"model {agent.model.name!r} produced no response")
        yield response
        return


def _count(run: RunState, event: object) -> None:
    kind = type(event)
    if kind is ModelRetry:
        run.usage.model_retries += 1
    elif kind is ModelFallback:
        run.usage.model_fallbacks += 1


async def _onion_items(
    run: RunState, request: ModelRequest
) -> AsyncGenerator[ModelStreamEvent | ModelResponse, None]:
    """The middleware chain's events, then its (output-processed) response."""
    onion = run.agent.model_onion
    assert onion is not None
    cancel = run.cancel
    request = await onion.prepare(request)
    last: object = None
    async with aclosing(onion.call(request)) as items:
        async for item in items:
            if cancel.cancelled:
                raise StopRun("cancelled", "cancelled during the model call")
            _count(run, item)
            # only the last item is the result; pass the others on
            if last is not None:
                yield last  # type: ignore[misc]
            last = item
    if type(last) is not ModelResponse:
        raise ModelError(
            "the model middleware chain did not end with a ModelResponse "
            f"(last item: {type(last).__name__}); a middleware's wrap() must yield the result last"
        )
    yield await onion.finish(last)


def _incomplete(model: Model, assembler: ResponseAssembler) -> ModelError:
    return ModelError(
        f"the stream of model {model.name!r} ended without a stop event: "
        f"{assembler.pending_description()}. The response was discarded; "
        "nothing was added to the conversation."
    )
