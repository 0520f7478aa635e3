"""The agent loop: one cycle per model call, nothing provider- or store-specific."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, TypeVar

from tether.context.memory_block import frozen_memory, memory_tools, strip_memory_blocks
from tether.context.prompt import settle_system_prompt
from tether.context.truncated import CONTINUE_PROMPT
from tether.control.events import BeforeInvocation, BeforeOutput
from tether.control.interrupts import Interrupt, InterruptSignal
from tether.errors import RunError, ToolLoopError
from tether.events import (
    MessageCompleted,
    ModelCallFinished,
    ReasoningDelta,
    ReplyTruncated,
    Steered,
    StreamEvent,
    TextDelta,
)
from tether.limits import DEFAULT_LIMITS, DEFAULT_MAX_TURNS, Limits
from tether.messages import Message, ReasoningBlock, TextBlock, ToolCall, ToolResult
from tether.modelcall import ModelCall
from tether.result import Result
from tether.run_end import Outcome, finish
from tether.run_state import RunState, StopRun
from tether.session import SessionJournal
from tether.suspension import Suspension, owning_call
from tether.toolcalls import repair_names, run_batch

if TYPE_CHECKING:
    from tether.agent_ref import AgentRef
    from tether.tools.context import CancelSignal

MAX_INVALID_TOOL_ROUNDS = 3
T = TypeVar("T")
GRACE_MESSAGE = (
    "[tether] The iteration budget for this task is used up. Do not call any more tools: "
    "reply now with your final answer based on what you have."
)


async def run_invocation(
    agent: AgentRef,
    new_messages: list[Message],
    cancel: CancelSignal,
    resume: Suspension | None = None,
    journal: SessionJournal | None = None,
    *,
    watched: bool = True,
) -> AsyncGenerator[StreamEvent, None]:
    """Run one invocation, yielding stream events; the last one is ``FinalResult``.

    A run that fails ends with stop reason ``error``: the history so far is kept
    (open tool calls get error results), AfterInvocation hooks still run, and the
    ``RunError`` is raised with ``.result`` set. A run that stops with
    ``interrupt`` or ``paused`` keeps its unfinished tool batch for ``resume``.

    ``watched=False`` (``invoke_async``: nobody reads the events but the FinalResult):
    unless the agent has observers, tools run without a live event channel, so what
    they would emit while running (progress, a sub-agent's events) is not produced.
    """
    conversation = agent.conversation
    run = RunState(agent, cancel)
    runtime = run.runtime
    run.journal = journal
    run.watched = watched or bool(runtime.observers)
    if resume is not None:
        run.last_assistant = _last_assistant(conversation.messages)
    conversation.run = run
    outcome = Outcome()
    try:
        if journal is not None:
            # when and by whom (lease holder: host:pid:token) this run started, for timelines
            start = {
                "started_at": time.time(),
                "by": journal.lease.holder,
                "resume": bool(resume),
                "model": runtime.model.name,
            }
            if agent.name is not None:
                start["agent"] = agent.name
            journal.defer("status", {"status": "running", **start}, status="running")
        memory = memory_tools(runtime.toolset)  # the memory tools' frozen blocks
        blocks = await frozen_memory(run, memory) if memory else None
        settle_system_prompt(run, resumed=resume is not None, memory=blocks)
        # The cycles (model call, tool batch, ...) are inline, not a generator of their
        # own: one layer less for every event (4% of a plain invocation).
        hooks = runtime.hooks
        if hooks.has(BeforeInvocation):
            before = await hooks.emit(BeforeInvocation(agent, new_messages))
            if before.block:
                raise StopRun("blocked", before.block)
            new_messages = before.messages
        if memory:
            new_messages = strip_memory_blocks(new_messages)
        for message in new_messages:
            yield await run.add_message(message)
        if resume is not None and resume.pending is not None:
            run.pending = resume.pending
            run.batch_position = resume.batch_position
            run.held = resume.held
            if resume.stop_reason == "cancelled":
                raise StopRun(
                    "cancelled", "aborted by the operator: a crash left a tool call in doubt"
                )
        argument_errors: dict[str, str] = {}
        unknown = 0
        while True:
            if run.pending is not None:  # the last reply's tool calls, or a resumed batch
                # the batch's events pass straight through: no generator layer of its own
                calls, results = run.pending
                _before_batch(run)
                batch = run_batch(run, calls, argument_errors, results)
                try:
                    async for event in batch:
                        yield event
                finally:
                    await batch.aclose()
                yield await _close_batch(run, calls, results)
                await _after_batch(run, calls, unknown)
            _check_boundary(run)
            if run.usage.model_calls == 0 and _cost_capped(runtime.limits):
                await _check_first_cost(run)
            steering = agent.conversation.steering
            while steering:  # agent.steer(...) from any thread: delivered before the next call
                text = steering.popleft()
                yield Steered(text)
                yield await run.add_message(Message.user(text))
            if runtime.budget is not None and not runtime.budget.consume():
                if run.grace_used or not runtime.budget.grace:
                    raise StopRun("budget_exhausted", "the shared iteration budget is used up")
                run.grace_used = True
                yield await run.add_message(Message("user", [TextBlock(GRACE_MESSAGE)]))
            held = run.buffered  # buffered output: deltas wait for the verdicts (see _release)
            call = ModelCall(run)
            model_events = call.events()
            try:
                async for item in model_events:
                    kind = type(item)
                    if not (held and (kind is TextDelta or kind is ReasoningDelta)):
                        yield item
            finally:
                await model_events.aclose()
            response = call.response
            assert response is not None  # events() ends by raising or with a response
            truncation = run.truncation
            truncation.max_tokens = None
            cut = response.stop_reason == "max_tokens"  # the only case the truncation step handles
            if cut and truncation.retry_cut_call(response, runtime.model):
                run.usage.continuations += 1
                yield ReplyTruncated("retry", 1, truncation.max_tokens)
                continue  # the same history again, with a larger output limit
            calls = response.tool_calls
            unknown = repair_names(run, calls) if calls else 0
            if calls and runtime.budget is not None and runtime.budget.refund_cheap:
                _refund_cheap(run, calls)
            if not calls and run.output_spec is not None and not truncation.will_continue(response):
                feedback = run.check_output(
                    truncation.whole(response.message)
                )  # stitched parts too
                if feedback is not None:  # invalid structured output: the model tries again
                    truncation.pieces = []  # the next answer starts afresh
                    if held:
                        for released in _release(response.message):
                            yield released
                    yield ModelCallFinished(response)
                    yield await run.add_message(response.message)
                    if isinstance(feedback, RunError):
                        raise feedback
                    yield await run.add_message(feedback)
                    continue
            if not calls and hooks.has(BeforeOutput):
                output = await hooks.emit(BeforeOutput(agent, response.message, output=run.output))
                if output.block:
                    raise StopRun("blocked", output.block)
                if output.message is not response.message:
                    response = replace(response, message=output.message)
            if held:
                for released in _release(response.message):
                    yield released
            yield ModelCallFinished(response)
            run.batch_position = len(run.messages)
            yield await run.add_message(response.message)
            if not calls:
                if cut and truncation.continue_text(response):
                    run.usage.continuations += 1
                    yield ReplyTruncated("continue", len(truncation.pieces))
                    yield await run.add_message(Message("user", [TextBlock(CONTINUE_PROMPT)]))
                    continue
                if truncation.pieces:
                    run.last_assistant = truncation.stitched(response.message)
                if response.stop_reason == "max_tokens":
                    run.stop_hint = ("max_tokens", "the model hit its output token limit")
                elif response.stop_reason == "content_filter":
                    run.stop_hint = (
                        "blocked",
                        "the provider's content filter stopped the response",
                    )
                break  # the run answered: the else clause below ends it
            run.pending = (calls, [None] * len(calls))
            if run.grace_used:
                raise StopRun(
                    "budget_exhausted",
                    "the iteration budget is used up and the model still called tools in its grace turn",
                )
            argument_errors = response.argument_errors  # the batch runs at the loop's top
    except StopRun as stop:
        outcome.stop(stop.stop_reason, stop.reason)
    except InterruptSignal as signal:  # raised outside a tool call, e.g. BeforeModelCall
        run.interrupts.extend(signal.interrupts)
        outcome.stop("interrupt", _pending_text(run.interrupts))
    except RunError as exc:
        outcome.fail(exc)
    except (asyncio.CancelledError, GeneratorExit):
        # The caller's task was cancelled or the consumer closed the stream: no
        # more yields are possible, but the history must stay valid.
        _abandon(run, "the invocation was abandoned by its caller")
        raise
    except Exception as exc:  # a bug in user code outside hooks/tools, or in tether itself
        failure = RunError(f"the run failed unexpectedly: {type(exc).__name__}: {exc}")
        failure.__cause__ = exc
        outcome.fail(failure)
    else:
        outcome.stop(*(run.stop_hint or ("end_turn", None)))
    finally:
        conversation.run = None
    for event in await finish(run, outcome):
        yield event


def _abandon(run: RunState, reason: str) -> None:
    closing = run.close_open_calls("cancelled", reason)
    if closing is not None:
        run.messages.append(closing)
    run.agent.conversation.last_result = Result(
        "cancelled", run.last_assistant, run.usage, run.session_id, reason
    )


def _pending_text(interrupts: list[Interrupt]) -> str:
    names = ", ".join(repr(i.name) for i in interrupts)
    return f"waiting for an answer to {len(interrupts)} interrupt(s): {names}"


def _last_assistant(messages: list[Message]) -> Message | None:
    for message in reversed(messages):
        if message.role == "assistant":
            return message
    return None


def _before_batch(run: RunState) -> None:
    if run.cancel.cancelled:
        raise StopRun("cancelled", "cancelled before the tools ran")
    if run.paused:
        raise StopRun("paused", "paused by agent.pause() before the tools ran")
    run.invalid_calls = 0


async def _close_batch(
    run: RunState, calls: Sequence[ToolCall], results: list[ToolResult | None]
) -> MessageCompleted:
    """After the batch: suspend for its interrupts, or append its tool message."""
    for waiting in run.held.values():  # still unanswered: pending again, same ids
        run.interrupts.extend(waiting)
    run.held = {}
    if run.blocked is not None:  # nobody is asked about a run that stops here
        run.interrupts.clear()
    if run.interrupts:
        _in_call_order(run.interrupts, calls)
        raise StopRun("interrupt", _pending_text(run.interrupts))
    if run.paused and None in results:
        raise StopRun("paused", "paused by agent.pause() between tool groups")
    missing = "no result was produced" if run.blocked is None else f"the run stopped: {run.blocked}"
    closing = run.close_open_calls("error", missing)
    assert closing is not None
    return await run.add_message(closing)


def _in_call_order(interrupts: list[Interrupt], calls: Sequence[ToolCall]) -> None:
    """Order a batch's interrupts by their calls' order, not by which call finished first
    (parallel calls raise in any order; the Result and the inbox show them stably)."""
    position = {call.id: index for index, call in enumerate(calls)}
    last = len(position)

    def order(interrupt: Interrupt) -> int:
        owner = owning_call(interrupt, calls)
        return last if owner is None else position[owner]

    interrupts.sort(key=order)


async def _after_batch(run: RunState, calls: Sequence[ToolCall], unknown: int) -> None:
    """Once the tool message is in: save the state, then stop for a block, a loop of
    unusable calls, or a cancel."""
    agent = run.agent
    runtime = run.runtime
    if run.journal is not None:
        await run.journal.state_if_changed(agent.conversation.state)
    if run.blocked is not None:
        raise StopRun("blocked", run.blocked)
    refused = run.invalid_calls >= len(calls)  # every call refused for its arguments
    run.invalid_rounds = run.invalid_rounds + 1 if unknown or refused else 0
    if run.invalid_rounds >= MAX_INVALID_TOOL_ROUNDS:
        if unknown:
            raise ToolLoopError(
                f"the model called unknown tools in {MAX_INVALID_TOOL_ROUNDS} consecutive rounds "
                f"(last: {', '.join(repr(c.name) for c in calls if c.name not in runtime.toolset.by_name)}); "
                f"available tools: {', '.join(sorted(runtime.toolset.by_name)) or 'none'}"
            )
        raise ToolLoopError(
            f"the model called tools with arguments they refuse in {MAX_INVALID_TOOL_ROUNDS} "
            f"consecutive rounds (last: {', '.join(repr(c.name) for c in calls)}; each got "
            "the validation error as its result); check the tools' schemas and the prompt, "
            "or set Limits(turns=...)"
        )
    if run.cancel.cancelled:
        raise StopRun("cancelled", "cancelled while the tools ran")


def _refund_cheap(run: RunState, calls: Sequence[ToolCall]) -> None:
    """Hermes' rule: a turn that only calls ``cheap`` tools gives its iteration back."""
    budget = run.runtime.budget
    tools = run.runtime.toolset.by_name
    cheap = all(getattr(tools.get(c.name), "cheap", False) for c in calls)
    if budget is not None and cheap and not run.grace_used:
        budget.refund()


def _release(message: Message) -> list[TextDelta | ReasoningDelta]:
    """Buffered output: the verdicted message's reasoning and text, as the deltas to release."""
    out: list[TextDelta | ReasoningDelta] = []
    for block in message.content:
        if type(block) is TextBlock and block.text:
            out.append(TextDelta(block.text))
        elif type(block) is ReasoningBlock and block.text:
            out.append(ReasoningDelta(block.text, block.signature, block.redacted))
    return out


def _cost_capped(limits: Limits | None) -> bool:
    return limits is not None and limits is not DEFAULT_LIMITS and limits.cost is not None


async def _check_first_cost(run: RunState) -> None:
    """Stop before a run's first model call when its input alone, estimated, passes
    ``Limits(cost=...)`` (later calls are estimated from the calls so far, in Limits)."""
    from tether.context.estimate import estimate_tokens
    from tether.pricing import input_cost

    agent = run.agent
    runtime = run.runtime
    limit = runtime.limits.cost if runtime.limits is not None else None
    if limit is None:
        return
    prompt = run.system_prompt  # as settled: the session's, memory blocks included
    tokens = estimate_tokens(agent.messages, runtime.toolset.specs, prompt)
    estimate = await input_cost(runtime.model, tokens)
    if estimate is not None and estimate > limit:
        raise StopRun(
            "cost_limit",
            f"the first model call's input alone (about {tokens} tokens) is estimated at "
            f"${estimate:.6f}, past the limit of ${limit}",
        )


def _check_boundary(run: RunState) -> None:
    """Stop at a cycle boundary when cancelled, paused or past a limit."""
    if run.cancel.cancelled:
        raise StopRun("cancelled", "cancelled by agent.cancel()")
    if run.paused:
        raise StopRun("paused", "paused by agent.pause()")
    limits = run.runtime.limits
    if limits is DEFAULT_LIMITS:  # the default cap alone: one comparison, no clock read
        if run.usage.model_calls < DEFAULT_MAX_TURNS:
            return
    elif limits is None:
        return
    hit = limits.exceeded(run.usage, time.monotonic() - run.started)
    if hit is not None:
        raise StopRun(*hit)
