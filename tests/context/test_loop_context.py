"""The context step in the loop: preflight, after tool batches, overflow recovery, bounds."""

from __future__ import annotations

from typing import Any

import pytest

from tether import Agent, ConfigurationError, Execution
from tether.context import KeepAll, SlidingWindow, Summarizing
from tether.context.compaction import OMITTED_MARK, SUMMARY_MARK
from tether.control.events import BeforeContextCompression
from tether.errors import ContextError, ContextOverflowError
from tether.events import ContextCompressed
from tether.messages import Message
from tether.models import ProviderError, ScriptedModel
from tether.models.scripted import _estimate_input

from .long_run import long_agent, lookup, lookups_done, summariser


def _valid(messages: list[Message]) -> None:
    """Every tool call is answered by the next message and every result has its call."""
    open_calls: set[str] = set()
    for message in messages:
        if message.role == "tool":
            answered = {r.tool_call_id for r in message.tool_results}
            assert answered == open_calls, (answered, open_calls)
            open_calls = set()
        else:
            assert not open_calls, f"calls {open_calls} have no result before a {message.role}"
            open_calls = {c.id for c in message.tool_calls}


def test_a_300_turn_run_stays_under_the_window_while_the_history_is_10x_over() -> None:
    agent = long_agent(300, window=3_000, overflow_at=3_000)
    result = agent("look up 300 records")
    assert result.stop_reason == "end_turn"
    assert result.text == "done after 300 lookups"
    model = agent.model
    assert isinstance(model, ScriptedModel)
    sizes = [_estimate_input(r) for r in model.requests]
    assert max(sizes) <= 3_000  # overflow_at never fired
    naive = _estimate_input(type(model.requests[-1])(agent.messages, [], None))
    assert naive > 10 * 3_000
    assert result.usage.compressions >= 5
    assert result.usage.context_tokens_after < result.usage.context_tokens_before
    for request in model.requests:
        _valid(request.messages)
        assert request.messages[0].text == "look up 300 records"  # the first user message
    assert len(agent.messages) == 1 + 2 * 300 + 1  # the transcript keeps everything
    last = model.requests[-1].messages
    assert sum(1 for m in last if m.text.startswith(SUMMARY_MARK)) == 1


def test_compression_is_a_stream_event_with_the_summary() -> None:
    agent = long_agent(60)

    async def run() -> list[Any]:
        return [e async for e in agent.stream("go")]

    import asyncio

    events = asyncio.run(run())
    compressed = [e for e in events if isinstance(e, ContextCompressed)]
    assert compressed
    assert all(e.reason == "threshold" for e in compressed)
    first = compressed[0]
    assert first.start == 1
    assert first.end > 1
    assert first.summary is not None
    assert first.summary.text.startswith(SUMMARY_MARK)
    assert "summary of" in first.summary.text
    assert first.tokens_after < first.tokens_before


def test_preflight_compresses_a_supplied_history_for_a_smaller_model() -> None:
    big = long_agent(40, window=None, overflow_at=None)
    big("go")
    history = list(big.messages)
    small = long_agent(41, window=2_000, overflow_at=2_000)
    small.messages = history
    events: list[Any] = []

    async def run() -> None:
        async for event in small.stream("one more"):
            events.append(event)

    import asyncio

    asyncio.run(run())
    compressed = [e for e in events if isinstance(e, ContextCompressed)]
    assert compressed[0].reason == "preflight"
    model = small.model
    assert isinstance(model, ScriptedModel)
    assert _estimate_input(model.requests[0]) <= 2_000
    assert small.last_result is not None
    assert small.last_result.stop_reason == "end_turn"


def test_overflow_from_the_provider_is_recovered_and_the_stated_limit_learned() -> None:
    # the model declares no window: the default (128k) is assumed until the error says 3000
    agent = long_agent(80, window=None, overflow_at=3_000)
    agent.model._name = "long-undeclared-1"  # type: ignore[attr-defined]
    result = agent("go")
    assert result.stop_reason == "end_turn"
    from tether.context import context_window

    assert context_window(agent.model) == 3_000
    reasons = result.usage.compressions
    assert reasons >= 2


def test_overflow_with_nothing_to_compress_is_a_clear_error() -> None:
    model = ScriptedModel(["never"], name="tiny-window", overflow_at=300, record_requests=True)
    agent = Agent(model, store=None, execution=Execution(context=Summarizing(summariser())))
    with pytest.raises(ContextOverflowError) as info:
        agent("x" * 5_000)
    assert "nothing left to compress" in str(info.value)
    assert "tiny-window" in str(info.value)
    assert info.value.result is not None
    assert info.value.result.stop_reason == "error"
    assert agent.messages[0].text == "x" * 5_000  # nothing lost


def test_keep_all_keeps_todays_behaviour_overflow_stops_the_run() -> None:
    agent = long_agent(300, context=KeepAll())
    with pytest.raises(ProviderError) as info:
        agent("go")
    assert info.value.reason.value == "context_overflow"


def test_sliding_window_by_messages_keeps_the_first_message_and_pairs() -> None:
    agent = long_agent(50, window=None, overflow_at=None, context=SlidingWindow(10))
    result = agent("go")
    assert result.stop_reason == "end_turn"
    model = agent.model
    assert isinstance(model, ScriptedModel)
    for request in model.requests:
        assert len(request.messages) <= 10
        assert request.messages[0].text == "go"
        _valid(request.messages)
    assert model.requests[-1].messages[1].text.startswith(OMITTED_MARK)


def test_sliding_window_by_tokens() -> None:
    agent = long_agent(60, window=None, overflow_at=None, context=SlidingWindow(max_tokens=1_500))
    agent("go")
    model = agent.model
    assert isinstance(model, ScriptedModel)
    assert max(_estimate_input(r) for r in model.requests) <= 1_500


def test_a_hook_can_replace_the_summary_or_veto() -> None:
    agent = long_agent(60)
    seen: list[BeforeContextCompression] = []

    @agent.on(BeforeContextCompression)
    def replace(event: BeforeContextCompression) -> None:
        seen.append(event)
        event.summary = Message.user("[tether: summary of earlier conversation]\nmine")

    agent("go")
    assert seen
    assert seen[0].reason == "threshold"
    model = agent.model
    assert isinstance(model, ScriptedModel)
    assert model.requests[-1].messages[1].text.endswith("mine")

    vetoed = long_agent(300)

    @vetoed.on(BeforeContextCompression)
    def veto(event: BeforeContextCompression) -> None:
        event.block = "keep everything"

    with pytest.raises(ContextOverflowError) as info:  # without compression the provider refuses
        vetoed("go")
    assert "vetoed (keep everything)" in str(info.value)
    assert isinstance(info.value.__cause__, ProviderError)


class _Rogue(SlidingWindow):
    async def compress(self, request):  # type: ignore[no-untyped-def]
        from tether.context import Compaction

        # cut between a tool call and its result
        bad = next(i for i, m in enumerate(request.messages) if m.role == "tool")
        return Compaction(request.head, bad, None)


def test_a_manager_that_splits_a_tool_call_from_its_result_is_refused() -> None:
    agent = long_agent(30, window=None, overflow_at=None, context=_Rogue(6))
    with pytest.raises(ContextError) as info:
        agent("go")
    assert "_Rogue" in str(info.value)
    assert "never between a tool call and its result" in str(info.value)


def test_the_summarising_call_failing_falls_back_to_dropping() -> None:
    broken = ScriptedModel([], name="broken-summariser")  # no turns: every call fails
    agent = long_agent(60, context=Summarizing(broken))
    result = agent("go")
    assert result.stop_reason == "end_turn"
    model = agent.model
    assert isinstance(model, ScriptedModel)
    assert "summarising call failed" in model.requests[-1].messages[1].text


def test_bad_configuration_is_refused_with_the_name() -> None:
    with pytest.raises(ConfigurationError) as info:
        Execution(context="summarise")  # type: ignore[arg-type]
    assert "Execution(context=...) takes a context manager" in str(info.value)
    with pytest.raises(ConfigurationError) as info:
        SlidingWindow(0)
    assert "SlidingWindow(max_messages=...) must be an int >= 1" in str(info.value)
    with pytest.raises(ConfigurationError) as info:
        Summarizing(threshold=1.5)
    assert "Summarizing(threshold=...) must be a number in (0, 1]" in str(info.value)
    with pytest.raises(ConfigurationError) as info:
        ScriptedModel(["x"], context_window=0)
    assert "ScriptedModel(context_window=...)" in str(info.value)


def test_the_default_manager_summarises_with_the_agents_own_model() -> None:
    def play(messages: list[Message], specs: list[dict[str, Any]]) -> Any:
        if not specs:  # the summarising call sends no tools
            return "own summary"
        done = lookups_done(messages)
        if done >= 40:
            return "finished"
        return {"tool_calls": [{"name": "lookup", "args": {"n": done}}]}

    model = ScriptedModel(
        play, name="own", context_window=2_000, overflow_at=2_000, record_requests=True
    )
    agent = Agent(model, tools=[lookup], store=None)
    result = agent("go")
    assert result.text == "finished"
    assert result.usage.compressions >= 1
    assert any("own summary" in m.text for m in model.requests[-1].messages)


class _OnePairAtATime(SlidingWindow):
    """A valid but timid manager: each pass drops only the oldest removable pair."""

    async def compress(self, request):  # type: ignore[no-untyped-def]
        from tether.context import Compaction

        return Compaction(request.head, request.cuts[0], None)


def test_compression_is_bounded_to_three_passes_per_model_call() -> None:
    agent = long_agent(40, window=None, overflow_at=None, context=KeepAll())
    agent("go")
    history = list(agent.messages)
    model = ScriptedModel(["never"], name="three-passes", overflow_at=200, record_requests=True)
    small = Agent(model, store=None, execution=Execution(context=_OnePairAtATime()))
    small.messages = history
    with pytest.raises(ContextOverflowError) as info:
        small("more")
    assert "after 3 compressions (context_overflow)" in str(info.value)
    assert "three-passes" in str(info.value)
    assert len(model.requests) == 4  # the first call and one retry per compression
    assert info.value.result is not None
    assert info.value.result.usage.compressions == 3
    assert small.messages[: len(history)] == history  # nothing lost


def test_the_summarising_call_with_the_agents_model_goes_through_its_middleware() -> None:
    from dataclasses import replace as copy_with

    from tether.control.middleware import ModelMiddleware
    from tether.messages import TextBlock

    class Redact(ModelMiddleware):
        async def input(self, request):  # type: ignore[no-untyped-def]
            def clean(m: Message) -> Message:
                blocks = [
                    TextBlock(b.text.replace("SECRET", "[redacted]")) if type(b) is TextBlock else b
                    for b in m.content
                ]
                return Message(m.role, blocks, m.usage)

            return copy_with(request, messages=[clean(m) for m in request.messages])

    def play(messages: list[Message], specs: list[dict[str, Any]]) -> Any:
        if not specs:
            return "summary"
        done = lookups_done(messages)
        if done >= 40:
            return "finished"
        return {"text": "SECRET plan", "tool_calls": [{"name": "lookup", "args": {"n": done}}]}

    model = ScriptedModel(play, name="own-mw", context_window=2_000, record_requests=True)
    agent = Agent(model, tools=[lookup], store=None, middleware=[Redact()])
    assert agent("go").text == "finished"
    summary_calls = [r for r in model.requests if not r.tool_specs]
    assert summary_calls
    assert all("SECRET" not in m.text for r in summary_calls for m in r.messages)
    assert "[redacted] plan" in summary_calls[0].messages[0].text


def test_a_model_that_reports_no_usage_still_compresses_a_fresh_conversation() -> None:
    """The first call of a fresh conversation is not counted in advance; with no provider
    count to calibrate from, the next call counts the whole view and still compresses."""
    from tether import tool
    from tether.events import ModelStop, TextDelta, ToolCallDelta
    from tether.messages import Usage
    from tether.models.base import ModelRequest

    @tool
    def fetch(n: int) -> str:
        """A large record."""
        return "r" * 4_000

    class Silent:
        name = "silent"
        context_window = 2_000

        def __init__(self) -> None:
            self.calls = 0

        async def stream(self, request: ModelRequest):  # type: ignore[no-untyped-def]
            self.calls += 1
            if request.messages[-1].role == "tool" and self.calls > 3:
                yield TextDelta("done")
                yield ModelStop("end_turn", Usage())
                return
            yield ToolCallDelta(index=0, id=f"c{self.calls}", name="fetch", arguments={"n": 1})
            yield ModelStop("tool_use", Usage())

    agent = Agent(
        Silent(),  # type: ignore[arg-type]
        tools=[fetch],
        store=None,
        execution=Execution(context=SlidingWindow(max_tokens=1_500)),
    )
    result = agent("fetch records")
    assert result.stop_reason == "end_turn"
    assert result.usage.compressions >= 1
