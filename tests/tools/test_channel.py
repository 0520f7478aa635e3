"""The live event channel: what a running tool emits reaches ``agent.stream()`` as it happens."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest

from tether import Agent, InputError, SessionStateError, ToolContext, tool
from tether.events import (
    FinalResult,
    Steered,
    StreamEvent,
    TextDelta,
    ToolFinished,
    ToolProgress,
    ToolStarted,
)
from tether.models import ScriptedModel
from tether.tools import channel as channel_module


def calling(*names: str) -> ScriptedModel:
    calls = [{"id": f"c{i}", "name": n, "args": {}} for i, n in enumerate(names, 1)]
    return ScriptedModel([{"tool_calls": calls}, "done"])


def kinds(events: list[StreamEvent]) -> list[str]:
    out = []
    for e in events:
        if isinstance(e, ToolProgress):
            out.append(f"progress {e.call_id} {e.progress:g}")
        elif isinstance(e, ToolStarted | ToolFinished):
            out.append(f"{type(e).__name__} {e.tool_call.id}")
    return out


def streamed(
    agent: Agent, on_event: Callable[[list[StreamEvent]], None] | None = None
) -> list[StreamEvent]:
    """``agent.stream("go")`` to its end; ``on_event`` sees the events so far after each one."""

    async def main() -> list[StreamEvent]:
        events: list[StreamEvent] = []
        async for event in agent.stream("go"):
            events.append(event)
            if on_event is not None:
                on_event(events)
        return events

    return asyncio.run(main())


def test_progress_is_yielded_while_the_tool_still_runs() -> None:
    release = asyncio.Event()

    @tool
    async def work(ctx: ToolContext) -> str:
        """Reports, then waits."""
        assert ctx.progress(1, 2, "half way")
        await release.wait()
        return "worked"

    agent = Agent(model=calling("work"), tools=[work])

    def on_event(events: list[StreamEvent]) -> None:
        if isinstance(events[-1], ToolProgress):
            assert not release.is_set()  # the tool is still waiting
            release.set()

    events = streamed(agent, on_event)
    [progress] = [e for e in events if isinstance(e, ToolProgress)]
    assert progress == ToolProgress("work", "c1", "", 1, 2, "half way")
    assert kinds(events) == ["ToolStarted c1", "progress c1 1", "ToolFinished c1"]
    assert isinstance(events[-1], FinalResult)
    assert events[-1].result.text == "done"


def test_a_sync_tool_reports_from_its_thread_while_it_blocks() -> None:
    release = threading.Event()

    @tool
    def work(ctx: ToolContext) -> str:
        """Reports from the worker thread, then blocks it."""
        ctx.progress(0.5, message="blocked")
        assert release.wait(30)
        return "worked"

    agent = Agent(model=calling("work"), tools=[work])

    def on_event(events: list[StreamEvent]) -> None:
        if isinstance(events[-1], ToolProgress):
            assert not release.is_set()
            release.set()

    events = streamed(agent, on_event)
    assert kinds(events) == ["ToolStarted c1", "progress c1 0.5", "ToolFinished c1"]


def test_parallel_calls_interleave_and_each_ends_after_its_own_events() -> None:
    gates = {"c1": asyncio.Event(), "c2": asyncio.Event()}

    @tool(read_only=True)
    async def step(ctx: ToolContext) -> str:
        """Reports twice around a gate."""
        ctx.progress(1)
        await gates[ctx.tool_call_id].wait()
        ctx.progress(2)
        return ctx.tool_call_id

    agent = Agent(model=calling("step", "step"), tools=[step])

    def on_event(events: list[StreamEvent]) -> None:
        seen = kinds(events)
        if seen.count("progress c1 1") + seen.count("progress c2 1") == 2:
            gates["c2"].set()  # c2 finishes first
        if "ToolFinished c2" in seen:
            gates["c1"].set()

    seen = kinds(streamed(agent, on_event))
    assert seen[:2] == ["ToolStarted c1", "ToolStarted c2"]
    assert sorted(seen[2:4]) == ["progress c1 1", "progress c2 1"]
    assert seen[4:] == ["progress c2 2", "ToolFinished c2", "progress c1 2", "ToolFinished c1"]


def test_nothing_of_a_timed_out_call_is_yielded_after_its_result() -> None:
    stop = threading.Event()
    refused = threading.Event()

    @tool(read_only=True, timeout=0.2)
    def stubborn(ctx: ToolContext) -> str:
        """Keeps reporting after its timeout (a thread cannot be stopped)."""
        n = 0
        while not stop.is_set():
            n += 1
            if not ctx.progress(n):
                refused.set()  # the call has ended: its reports are refused
                return "late"
            stop.wait(0.01)
        return "stopped"

    @tool(read_only=True)
    async def sibling() -> str:
        """Keeps the group open until the stubborn thread was refused."""
        for _ in range(500):
            if refused.is_set():
                return "seen"
            await asyncio.sleep(0.01)
        return "not refused"

    agent = Agent(model=calling("stubborn", "sibling"), tools=[stubborn, sibling])
    try:
        events = streamed(agent)
    finally:
        stop.set()
    seen = kinds(events)
    finished = seen.index("ToolFinished c1")
    assert any(k.startswith("progress c1") for k in seen[:finished])
    assert not any(k.startswith("progress c1") for k in seen[finished:])
    results = {e.tool_call.id: e.result for e in events if isinstance(e, ToolFinished)}
    assert results["c1"].status == "timeout"
    assert results["c2"].content == "seen"


def test_nothing_of_a_cancelled_call_is_yielded_after_its_result() -> None:
    kept: list[ToolContext] = []

    @tool
    async def long(ctx: ToolContext) -> str:
        """Reports, then waits to be cancelled."""
        kept.append(ctx)
        ctx.progress(1)
        await asyncio.sleep(30)
        return "never"

    agent = Agent(model=calling("long"), tools=[long])

    def on_event(events: list[StreamEvent]) -> None:
        if isinstance(events[-1], ToolProgress):
            agent.cancel()
        if isinstance(events[-1], ToolFinished):
            assert kept[0].progress(2) is False  # ended: refused, never yielded

    events = streamed(agent, on_event)
    assert kinds(events) == ["ToolStarted c1", "progress c1 1", "ToolFinished c1"]
    [finished] = [e for e in events if isinstance(e, ToolFinished)]
    assert finished.result.status == "cancelled"
    assert isinstance(events[-1], FinalResult)
    assert events[-1].result.stop_reason == "cancelled"


def test_a_flood_of_progress_is_bounded_and_keeps_the_latest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(channel_module, "CHANNEL_SIZE", 8)

    @tool
    async def flood(ctx: ToolContext) -> str:
        """10,000 reports without yielding to the loop: nobody drains in between."""
        for n in range(1, 10_001):
            assert ctx.progress(n, 10_000)
        return "flooded"

    agent = Agent(model=calling("flood"), tools=[flood])
    events = streamed(agent)
    values = [e.progress for e in events if isinstance(e, ToolProgress)]
    assert values == [1, 2, 3, 4, 5, 6, 7, 8, 10_000]  # the queue, then the latest held
    assert kinds(events)[-1] == "ToolFinished c1"


def test_emit_waits_for_room_so_memory_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(channel_module, "CHANNEL_SIZE", 4)
    sent: list[int] = []

    @tool
    async def chatty(ctx: ToolContext) -> str:
        """Emits 50 events, each awaited."""
        for n in range(50):
            assert await ctx.emit(TextDelta(str(n)))
            sent.append(n)
        return "said"

    agent = Agent(model=calling("chatty"), tools=[chatty])

    async def main() -> list[str]:
        texts: list[str] = []
        async for event in agent.stream("go"):
            if isinstance(event, TextDelta) and event.text.isdigit():
                # the tool is at most one queue (4) + what was drained (4) ahead
                assert len(sent) - len(texts) <= 8
                texts.append(event.text)
                await asyncio.sleep(0)  # a consumer slower than the tool
        return texts

    assert asyncio.run(main()) == [str(n) for n in range(50)]  # nothing dropped, in order


def test_a_tool_that_takes_no_context_runs_inline_without_a_channel() -> None:
    seen: list[Any] = []

    @tool
    async def plain() -> str:
        """No context: cannot emit, so it runs in the stream's own task."""
        run = agent.conversation.run
        seen.append((asyncio.current_task(), run.outlets if run is not None else "no run"))
        return "plain"

    agent = Agent(model=calling("plain"), tools=[plain])

    async def main() -> asyncio.Task[Any] | None:
        [e async for e in agent.stream("go")]
        return asyncio.current_task()

    consumer = asyncio.run(main())
    assert seen == [(consumer, None)]


def test_emit_refuses_a_final_result_and_another_thread() -> None:
    errors: list[BaseException] = []

    @tool
    async def bad(ctx: ToolContext) -> str:
        """Misuses emit."""
        result = agent.last_result
        with pytest.raises(InputError, match="cannot send a FinalResult"):
            await ctx.emit(FinalResult(result))  # type: ignore[arg-type]

        def from_thread() -> None:
            try:
                asyncio.run(ctx.emit(Steered("x")))
            except SessionStateError as exc:
                errors.append(exc)

        await asyncio.to_thread(from_thread)
        return "ok"

    agent = Agent(model=calling("bad"), tools=[bad])
    events = streamed(agent)
    assert isinstance(events[-1], FinalResult)
    assert events[-1].result.text == "done"
    [error] = errors
    assert "await ctx.emit() on the agent's event loop" in str(error)
    assert "ctx.progress()" in str(error)


def test_a_context_outside_a_run_streams_nothing() -> None:
    from tether.messages import ToolCall
    from tether.tools.context import CancelSignal

    agent = Agent(model=calling())
    ctx = ToolContext(ToolCall("c1", "t", {}), agent, {}, CancelSignal())
    assert ctx.progress(1) is False
    assert asyncio.run(ctx.emit(Steered("x"))) is False


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("half",), "ctx.progress(progress=...) takes a number, got 'half'"),
        ((True,), "ctx.progress(progress=...) takes a number, got True"),
        ((1, "10"), "ctx.progress(total=...) takes a number or None, got '10'"),
        ((1, 10, 3), "ctx.progress(message=...) takes a str or None, got 3"),
    ],
)
def test_progress_refuses_what_is_not_a_number_or_text(args: tuple[Any, ...], message: str) -> None:
    @tool
    async def odd(ctx: ToolContext) -> str:
        """Reports nonsense."""
        ctx.progress(*args)
        return "unreachable"

    agent = Agent(model=calling("odd"), tools=[odd])
    events = streamed(agent)
    [finished] = [e for e in events if isinstance(e, ToolFinished)]
    assert finished.result.content == f"Error: InputError: tool 'odd': {message}"
    assert not any(isinstance(e, ToolProgress) for e in events)


def test_an_unwatched_invocation_runs_context_tools_inline_and_an_observer_watches() -> None:
    """``invoke`` reads nothing but the Result: a context tool runs inline (no task, no
    channel) and its progress is not produced; an observer makes the run watched again."""
    seen: list[tuple[bool, bool]] = []

    @tool
    async def work(ctx: ToolContext) -> str:
        """Reports once."""
        inline = asyncio.current_task() is running[0]
        seen.append((inline, ctx.progress(1, 1, "done")))
        return "worked"

    running: list[asyncio.Task[Any] | None] = [None]

    async def invoke(agent: Agent) -> None:
        running[0] = asyncio.current_task()
        assert (await agent.invoke_async("go")).text == "done"

    asyncio.run(invoke(Agent(model=calling("work"), tools=[work])))
    assert seen == [(True, False)]

    watched = Agent(model=calling("work"), tools=[work])
    observed: list[StreamEvent] = []
    watched.observers.append(observed.append)
    asyncio.run(invoke(watched))
    assert seen[1] == (False, True)
    assert [e.message for e in observed if isinstance(e, ToolProgress)] == ["done"]
