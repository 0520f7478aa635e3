"""Loop semantics: tool errors, bad model output, limits, budget, cancel."""

import asyncio
import threading
import time
from collections.abc import AsyncGenerator

import pytest
from history import assert_history_valid, assert_run_fails

from tether import Agent, IterationBudget, Limits, ModelError, ToolContext, ToolLoopError, tool
from tether.events import ModelStop, ModelStreamEvent, TextDelta, ToolCallDelta, ToolStarted
from tether.messages import Message, Usage
from tether.models import ModelRequest, ScriptedModel


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def calls(*names_args: tuple[str, dict]) -> dict:
    return {"tool_calls": [{"name": n, "args": a} for n, a in names_args]}


def tool_messages(agent: Agent) -> list[Message]:
    return [m for m in agent.messages if m.role == "tool"]


# -- tool failures ------------------------------------------------------------------


def test_a_tool_that_raises_gives_the_model_an_error_result():
    @tool
    def explode(path: str) -> str:
        """Always fails."""
        raise FileNotFoundError(f"no such file: {path}")

    agent = Agent(
        model=ScriptedModel([calls(("explode", {"path": "/x"})), "it failed"]), tools=[explode]
    )
    result = agent("go")
    assert result.stop_reason == "end_turn"
    [res] = tool_messages(agent)[0].tool_results
    assert res.is_error
    assert res.status == "error"
    assert res.content == "Error: FileNotFoundError: no such file: /x"
    assert "Traceback" not in res.content


def test_a_non_serializable_return_value_is_converted_with_a_note():
    class Thing:
        def __repr__(self) -> str:
            return "<Thing 7>"

    @tool
    def make() -> object:
        """Returns an object JSON cannot hold."""
        return Thing()

    agent = Agent(model=ScriptedModel([calls(("make", {})), "ok"]), tools=[make])
    assert agent("go").stop_reason == "end_turn"
    [res] = tool_messages(agent)[0].tool_results
    assert not res.is_error
    assert "<Thing 7>" in res.content
    assert "not JSON-serializable" in res.content


def test_invalid_tool_call_json_goes_back_to_the_model():
    model = ScriptedModel([{"tool_calls": [{"name": "add", "args": '{"a": 1, "b": '}]}, "sorry"])
    agent = Agent(model=model, tools=[add])
    assert agent("go").stop_reason == "end_turn"
    [res] = tool_messages(agent)[0].tool_results
    assert res.is_error
    assert "not valid JSON" in res.content
    assert "'add'" in res.content
    assert agent.last_result is not None
    assert agent.last_result.usage.tool_calls == 0


def test_arguments_are_coerced_and_validation_errors_go_to_the_model():
    model = ScriptedModel(
        [calls(("add", {"a": "40", "b": 2})), calls(("add", {"a": "abc", "b": 1})), "done"]
    )
    agent = Agent(model=model, tools=[add])
    agent("go")
    first, second = (m.tool_results[0] for m in tool_messages(agent))
    assert first.content == "42"
    assert not first.is_error
    assert second.is_error
    assert "'a'" in second.content


def test_unknown_tool_lists_the_available_ones_and_near_misses_are_repaired():
    model = ScriptedModel([calls(("ADD", {"a": 1, "b": 1}), ("frobnicate", {})), "done"])
    agent = Agent(model=model, tools=[add])
    assert agent("go").stop_reason == "end_turn"
    repaired, unknown = tool_messages(agent)[0].tool_results
    assert repaired.name == "add"
    assert repaired.content == "2"
    assert agent.messages[1].tool_calls[0].name == "add"  # history shows the real name
    assert unknown.is_error
    assert "frobnicate" in unknown.content
    assert "add" in unknown.content


def test_three_rounds_of_unknown_tools_stop_the_run_with_an_error():
    model = ScriptedModel([calls(("nope", {}))] * 3 + ["never reached"])
    agent = Agent(model=model, tools=[add])
    assert_run_fails(agent, "go", ToolLoopError, "3 consecutive rounds", "available tools: add")
    assert model.calls == 3


def test_three_rounds_of_refused_arguments_stop_the_run_with_an_error():
    """A model that keeps calling a tool with arguments it refuses (and no Limits) is
    stopped after three rounds, each call having seen its validation error."""
    bad = calls(("add", {"a": "one", "b": 1}))
    model = ScriptedModel([bad, bad, bad, "never reached"])
    agent = Agent(model=model, tools=[add])
    assert_run_fails(
        agent, "go", ToolLoopError, "arguments they refuse in 3 consecutive rounds", "'add'"
    )
    assert model.calls == 3
    assert all(r.is_error for m in tool_messages(agent) for r in m.tool_results)


def test_a_round_with_one_valid_call_resets_the_refused_argument_count():
    bad = ("add", {"a": "one", "b": 1})
    model = ScriptedModel(
        [calls(bad), calls(bad), calls(bad, ("add", {"a": 1, "b": 1})), calls(bad), "done"]
    )
    agent = Agent(model=model, tools=[add])
    assert agent("go").stop_reason == "end_turn"


def test_a_valid_round_resets_the_unknown_tool_count():
    model = ScriptedModel(
        [
            calls(("nope", {})),
            calls(("nope", {})),
            calls(("add", {"a": 1, "b": 1})),
            calls(("nope", {})),
            calls(("nope", {})),
            "done",
        ]
    )
    assert Agent(model=model, tools=[add])("go").stop_reason == "end_turn"


# -- bad model output -----------------------------------------------------------------


class BrokenStream:
    """A model whose stream stops in the middle of a tool call."""

    name = "broken"

    async def stream(self, request: ModelRequest) -> AsyncGenerator[ModelStreamEvent, None]:
        yield TextDelta("Let me ")
        yield ToolCallDelta(0, id="c1", name="add", arguments='{"a": 1')


def test_a_stream_that_ends_mid_tool_call_is_a_clear_error_and_nothing_is_added():
    agent = Agent(model=BrokenStream(), tools=[add])
    with pytest.raises(ModelError) as info:
        agent("go")
    text = str(info.value)
    assert "ended without a stop event" in text
    assert "'add'" in text
    assert [m.role for m in agent.messages] == ["user"]
    assert info.value.result is not None
    assert info.value.result.stop_reason == "error"


def test_a_script_that_runs_out_is_a_clear_error_with_history_kept():
    agent = Agent(model=ScriptedModel([calls(("add", {"a": 1, "b": 2}))]), tools=[add])
    with pytest.raises(ModelError, match="has no turn left: it was given 1 turn"):
        agent("go")
    assert [m.role for m in agent.messages] == ["user", "assistant", "tool"]


def test_max_tokens_and_content_filter_stop_reasons():
    # a cut text reply is continued twice (issue 12); still cut after that: max_tokens
    agent = Agent(model=ScriptedModel([{"text": "trunc", "stop_reason": "max_tokens"}] * 3))
    assert agent("go").stop_reason == "max_tokens"
    agent = Agent(model=ScriptedModel([{"text": "", "stop_reason": "content_filter"}]))
    result = agent("go")
    assert result.stop_reason == "blocked"
    assert "content filter" in (result.reason or "")


# -- limits and budget ----------------------------------------------------------------


def looping_model() -> ScriptedModel:
    return ScriptedModel(lambda messages, tools: calls(("add", {"a": 1, "b": 1})))


@pytest.mark.parametrize(
    ("limits", "stop_reason"),
    [
        (Limits(turns=3), "limit_turns"),
        (Limits(total_tokens=30), "limit_total_tokens"),
        (Limits(output_tokens=10), "limit_output_tokens"),
        (Limits(tool_calls=2), "limit_tool_calls"),
    ],
)
def test_limits_stop_at_a_cycle_boundary(limits, stop_reason):
    agent = Agent(model=looping_model(), tools=[add], limits=limits)
    result = agent("go")
    assert result.stop_reason == stop_reason
    assert result.reason
    assert_history_valid(agent.messages)


def test_turn_limit_counts_model_calls():
    agent = Agent(model=looping_model(), tools=[add], limits=Limits(turns=3))
    assert agent("go").usage.model_calls == 3


def test_wall_time_limit():
    @tool
    def slow() -> str:
        """Sleeps a little."""
        time.sleep(0.05)
        return "z"

    agent = Agent(
        model=ScriptedModel(lambda m, t: calls(("slow", {}))),
        tools=[slow],
        limits=Limits(wall_seconds=0.12),
    )
    result = agent("go")
    assert result.stop_reason == "limit_wall_time"
    assert "limit is 0.12 s" in (result.reason or "")


@pytest.mark.parametrize("bad", [0, -1, True])
def test_limits_reject_non_positive_values(bad):
    with pytest.raises(ValueError, match="must be a positive number"):
        Limits(turns=bad)


def test_budget_grace_call_lets_the_model_wrap_up():
    seen: list[str] = []

    def script(messages, tools):
        seen.append(messages[-1].text)
        if "budget" in messages[-1].text:
            return "wrapping up"
        return calls(("add", {"a": 1, "b": 1}))

    budget = IterationBudget(2)
    agent = Agent(model=ScriptedModel(script), tools=[add], budget=budget)
    result = agent("go")
    assert result.stop_reason == "end_turn"
    assert result.text == "wrapping up"
    assert "iteration budget" in seen[-1]
    assert budget.remaining == 0


def test_budget_exhausted_when_the_model_keeps_calling_tools():
    budget = IterationBudget(1)
    agent = Agent(model=looping_model(), tools=[add], budget=budget)
    result = agent("go")
    assert result.stop_reason == "budget_exhausted"
    assert result.usage.model_calls == 2  # one budgeted call + the grace call
    assert_history_valid(agent.messages)
    assert agent.messages[-1].tool_results[0].content.startswith("Not run:")


def test_budget_is_shared_between_agents_and_thread_safe():
    budget = IterationBudget(1000)

    def take() -> None:
        for _ in range(100):
            budget.consume()

    threads = [threading.Thread(target=take) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert budget.remaining == 200
    budget.refund(5)
    assert budget.remaining == 205
    assert not budget.consume(300)
    assert budget.remaining == 205

    shared = IterationBudget(3)
    first = Agent(model=looping_model(), tools=[add], budget=shared)
    second = Agent(model=ScriptedModel(["no budget left?"]), budget=shared)
    assert first("go").stop_reason == "budget_exhausted"
    result = second("go")
    assert result.text == "no budget left?"  # answered in its grace call
    assert shared.remaining == 0


# -- cancel ---------------------------------------------------------------------------


def test_cancel_reaches_a_running_sync_tool_through_its_context():
    started = threading.Event()
    done = threading.Event()
    observed: list[bool] = []

    @tool
    def watch(ctx: ToolContext) -> str:
        """Waits until cancelled."""
        started.set()
        observed.append(ctx.cancel.wait(5))
        done.set()
        return "stopped"

    agent = Agent(model=ScriptedModel([calls(("watch", {})), "never"]), tools=[watch])
    threading.Thread(target=lambda: (started.wait(5), agent.cancel())).start()
    result = agent("go")
    assert result.stop_reason == "cancelled"
    assert done.wait(5)  # the thread saw the signal (the run does not wait for it)
    assert observed == [True]
    assert_history_valid(agent.messages)
    assert agent.messages[-1].tool_results[0].status == "cancelled"


async def test_cancel_cancels_running_async_tools_and_answers_every_call():
    started = asyncio.Event()
    finished: list[str] = []

    @tool(read_only=True)
    async def hang(n: int) -> str:
        """Never returns on its own."""
        started.set()
        await asyncio.sleep(60)
        finished.append("hang")
        return "late"

    model = ScriptedModel([calls(("hang", {"n": 1}), ("hang", {"n": 2})), "never"])
    agent = Agent(model=model, tools=[hang])
    task = asyncio.ensure_future(agent.invoke_async("go"))
    await asyncio.wait_for(started.wait(), 5)
    agent.cancel()
    agent.cancel()  # idempotent
    result = await asyncio.wait_for(task, 5)
    assert result.stop_reason == "cancelled"
    assert finished == []
    assert_history_valid(agent.messages)
    statuses = [r.status for r in agent.messages[-1].tool_results]
    assert statuses == ["cancelled", "cancelled"]


async def test_cancel_during_the_only_async_tool_of_a_batch():
    started = asyncio.Event()

    @tool
    async def hang() -> str:
        """Never returns on its own."""
        started.set()
        await asyncio.sleep(60)
        return "late"

    agent = Agent(model=ScriptedModel([calls(("hang", {})), "never"]), tools=[hang])
    task = asyncio.ensure_future(agent.invoke_async("go"))
    await asyncio.wait_for(started.wait(), 5)
    agent.cancel()
    result = await asyncio.wait_for(task, 5)
    assert result.stop_reason == "cancelled"
    assert agent.messages[-1].tool_results[0].status == "cancelled"
    assert not task.cancelled()


async def test_cancel_before_the_next_model_call():
    agent = Agent(model=ScriptedModel([calls(("add", {"a": 1, "b": 2})), "never"]), tools=[add])
    result = None
    async for event in agent.stream("go"):
        if isinstance(event, ToolStarted):
            agent.cancel()
        result = event
    assert result is not None
    assert agent.last_result is not None
    assert agent.last_result.stop_reason == "cancelled"
    assert agent.last_result.usage.model_calls == 1
    assert_history_valid(agent.messages)


def test_cancel_without_a_run_is_harmless_and_does_not_leak_into_the_next_run():
    agent = Agent(model=ScriptedModel(["fine"]))
    agent.cancel()
    assert agent("go").stop_reason == "end_turn"


class CountingModel:
    name = "counting"

    def __init__(self) -> None:
        self.calls = 0

    async def stream(self, request: ModelRequest) -> AsyncGenerator[ModelStreamEvent, None]:
        self.calls += 1
        yield TextDelta("x")
        yield ModelStop("end_turn", Usage(1, 1))


def test_a_custom_model_class_satisfies_the_protocol():
    model = CountingModel()
    assert Agent(model=model)("go").text == "x"
    assert model.calls == 1
