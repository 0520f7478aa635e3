"""Interrupts and resume within one process (durable resume is tested with the stores)."""

from typing import Any

import pytest

from tether import Agent, SessionStateError, ToolContext, tool
from tether.control import BeforeModelCall, BeforeToolCall, Confirm, InterventionHandler
from tether.control.interrupts import InterruptSignal, interrupt_id
from tether.durable import MemoryStore
from tether.models import ScriptedModel


def two_turns(*calls: tuple[str, dict[str, Any]], final: str = "done") -> ScriptedModel:
    return ScriptedModel([{"tool_calls": [{"name": n, "args": a} for n, a in calls]}, final])


def test_a_tool_interrupt_suspends_then_returns_the_answer_on_resume():
    runs: list[str] = []

    @tool
    def deploy(env: str, ctx: ToolContext) -> str:
        """Deploy after a human says which version."""
        runs.append(env)
        version = ctx.interrupt("version", {"question": f"which version for {env}?"})
        return f"deployed {version} to {env}"

    model = two_turns(("deploy", {"env": "prod"}))
    agent = Agent(model=model, tools=[deploy])
    result = agent("ship it")
    assert result.stop_reason == "interrupt"
    [pending] = result.interrupts
    assert pending.name == "version"
    assert pending.reason == {"question": "which version for prod?"}
    assert pending.source == "tool"
    assert pending.tool_call is not None
    assert pending.tool_call.arguments == {"env": "prod"}
    assert agent.pending_interrupts == [pending]
    assert agent.messages[-1].role == "assistant"  # the call stays open for resume

    resumed = agent.resume({pending.id: "v2.1"})
    assert resumed.stop_reason == "end_turn"
    assert resumed.text == "done"
    assert agent.messages[2].tool_results[0].content == "deployed v2.1 to prod"
    assert runs == ["prod", "prod"]  # two-phase: the tool ran again from the start
    assert model.calls == 2  # the model was not called again for the interrupted turn
    assert agent.pending_interrupts == []


def test_except_exception_in_a_tool_cannot_swallow_an_interrupt():
    @tool
    def careless(ctx: ToolContext) -> str:
        """Catches everything it can."""
        try:
            ctx.interrupt("ok?")
        except Exception:
            return "swallowed"
        return "answered"

    agent = Agent(model=two_turns(("careless", {})), tools=[careless])
    result = agent("go")
    assert result.stop_reason == "interrupt"
    assert issubclass(InterruptSignal, BaseException)
    assert not issubclass(InterruptSignal, Exception)
    agent.resume({result.interrupts[0].id: True})
    assert agent.messages[2].tool_results[0].content == "answered"


def test_interrupt_from_a_sync_tool_running_in_a_thread():
    @tool
    def ask(ctx: ToolContext) -> str:
        """Sync tool."""
        return str(ctx.interrupt("name"))

    agent = Agent(model=two_turns(("ask", {})), tools=[ask])
    result = agent("go")
    assert agent.resume({result.interrupts[0].id: "Ada"}).stop_reason == "end_turn"
    assert agent.messages[2].tool_results[0].content == "Ada"


def test_interrupts_of_a_parallel_batch_are_collected_and_finished_siblings_never_rerun():
    runs: list[str] = []

    @tool(read_only=True)
    def look(name: str, ctx: ToolContext) -> str:
        """Read-only; asks about names starting with 'ask'."""
        runs.append(name)
        if name.startswith("ask"):
            return f"{name}={ctx.interrupt('approve', name)}"
        return name

    model = two_turns(
        ("look", {"name": "a"}), ("look", {"name": "ask1"}), ("look", {"name": "ask2"})
    )
    agent = Agent(model=model, tools=[look])
    result = agent("go")
    assert result.stop_reason == "interrupt"
    assert sorted(i.reason for i in result.interrupts) == ["ask1", "ask2"]
    first, second = result.interrupts

    partial = agent.resume({first.id: "yes"})
    assert partial.stop_reason == "interrupt"  # one still pending
    assert partial.interrupts == [second]
    # targeted resume: the answered call re-ran (to its interrupt, answered now); ask2 waits
    assert sorted(runs) == ["a", "ask1", "ask1", "ask2"]

    final = agent.resume({second.id: "no"})
    assert final.stop_reason == "end_turn"
    assert runs.count("a") == 1  # the finished sibling was not re-run
    assert runs.count("ask1") == 2  # nor the one the partial resume finished
    contents = [r.content for r in agent.messages[2].tool_results]
    assert contents == ["a", f"{first.reason}=yes", f"{second.reason}=no"]


def test_hook_interrupts_before_tool_and_model_calls():
    agent = Agent(model=two_turns(("add", {"a": 1, "b": 2})), tools=[add])
    asked: list[Any] = []

    @agent.on(BeforeToolCall)
    def gate(event: BeforeToolCall) -> None:
        answer = event.interrupt("allow-tool", event.tool_call.name)
        asked.append(answer)
        if answer != "yes":
            event.cancel_tool = "not allowed"

    @agent.on(BeforeModelCall)
    def budget(event: BeforeModelCall) -> None:
        if len(event.messages) > 1:  # before the second model call
            asked.append(event.interrupt("continue?"))

    result = agent("go")
    assert [i.name for i in result.interrupts] == ["allow-tool"]
    assert result.interrupts[0].source == "hook"
    result = agent.resume({result.interrupts[0].id: "yes"})
    assert [i.name for i in result.interrupts] == ["continue?"]
    assert result.interrupts[0].tool_call is None
    result = agent.resume({result.interrupts[0].id: True})
    assert result.stop_reason == "end_turn"
    assert asked == ["yes", True]
    assert agent.messages[2].tool_results[0].content == "3"


@tool
def add(a: int, b: int) -> int:
    """Add."""
    return a + b


class AskFirst(InterventionHandler):
    name = "ask-first"

    def before_tool_call(self, event: BeforeToolCall) -> Confirm:
        return Confirm(f"run {event.tool_call.name}?")


@pytest.mark.parametrize(
    ("answer", "content", "status"),
    [
        (True, "3", "ok"),
        ("approve", "3", "ok"),
        (False, "the approver denied it", "denied"),
        ("deny", "the approver denied it", "denied"),
        ({"approved": False, "reason": "too risky"}, "too risky", "denied"),
        ({"approved": True, "args": {"a": 40, "b": 2}}, "42", "ok"),
    ],
)
def test_confirm_responses(answer, content, status):
    agent = Agent(
        model=two_turns(("add", {"a": 1, "b": 2})), tools=[add], interventions=[AskFirst()]
    )
    result = agent("go")
    [pending] = result.interrupts
    assert pending.reason == "run add?"
    assert agent.resume({pending.id: answer}).stop_reason == "end_turn"
    [res] = agent.messages[2].tool_results
    assert content in res.content
    assert res.status == status


def test_bad_resumes_are_clear_errors_that_change_nothing():
    agent = Agent(
        model=two_turns(("add", {"a": 1, "b": 2})), tools=[add], interventions=[AskFirst()]
    )
    with pytest.raises(SessionStateError, match="is not suspended: there is nothing to resume"):
        agent.resume({})
    result = agent("go")
    [pending] = result.interrupts
    before = list(agent.messages)

    with pytest.raises(ValueError, match=r"unknown interrupt id\(s\) \['int_nope'\]"):
        agent.resume({"int_nope": True})
    with pytest.raises(TypeError, match="not JSON-serializable"):
        agent.resume({pending.id: {1, 2}})
    with pytest.raises(ValueError, match=r"edited arguments for interrupt .* are invalid"):
        agent.resume({pending.id: {"approved": True, "args": {"a": "x"}}})
    with pytest.raises(ValueError, match="a Confirm response must be"):
        agent.resume({pending.id: "maybe"})
    with pytest.raises(SessionStateError, match="is suspended"):
        agent("a new prompt while suspended")

    assert agent.messages == before
    assert agent.pending_interrupts == [pending]
    assert agent.resume({pending.id: True}).stop_reason == "end_turn"


def test_an_edited_answer_is_checked_strictly_and_runs_exactly_as_approved():
    agent = Agent(
        model=two_turns(("add", {"a": "1", "b": 2})), tools=[add], interventions=[AskFirst()]
    )
    [pending] = agent("go").interrupts
    # a person's "40" is not coerced to 40; the model's own "1" (kept as is) still is
    with pytest.raises(ValueError, match="tool 'add': argument 'a': expected an integer, got '40'"):
        agent.resume({pending.id: {"approved": True, "args": {"a": "40", "b": 2}}})
    assert agent.pending_interrupts == [pending]
    assert agent.resume({pending.id: {"approved": True, "args": {"a": "1", "b": 41}}})
    assert agent.messages[2].tool_results[0].content == "42"


def test_interrupt_ids_are_deterministic_within_their_session():
    ids = []
    for session in ("same-shape-1", "same-shape-2"):
        agent = Agent(
            model=two_turns(("add", {"a": 1, "b": 2})),
            tools=[add],
            interventions=[AskFirst()],
            session_id=session,
            store=MemoryStore(),  # (a session id alone journals to ./tether.db)
        )
        ids.append(agent("go").interrupts[0].id)
    # another session of the same shape asks its own question (the re-run of one session
    # finds its answer: every resume test)
    assert ids[0] != ids[1]
    assert interrupt_id("tool", 1, "c", "n", "s-1") == interrupt_id("tool", 1, "c", "n", "s-1")
    assert interrupt_id("tool", 1, "c", "n") != interrupt_id("tool", 3, "c", "n")
    assert interrupt_id("tool", 1, "c", "n", "a") != interrupt_id("tool", 1, "c", "n", "b")


def test_pause_stops_at_the_next_boundary_and_resume_continues():
    model = ScriptedModel(
        [
            {"tool_calls": [{"name": "add", "args": {"a": 1, "b": 1}}]},
            {"tool_calls": [{"name": "add", "args": {"a": 2, "b": 2}}]},
            "done",
        ]
    )
    agent = Agent(model=model, tools=[add])

    @agent.on(BeforeToolCall)
    def pause_after_first(event: BeforeToolCall) -> None:
        if event.tool_call.arguments == {"a": 1, "b": 1}:
            agent.pause()

    result = agent("go")
    assert result.stop_reason == "paused"
    assert result.interrupts == []
    assert model.calls == 1
    resumed = agent.resume()
    assert resumed.stop_reason == "end_turn"
    assert [m.tool_results[0].content for m in agent.messages if m.role == "tool"] == ["2", "4"]


async def test_stream_consumers_see_each_interrupt_before_the_final_result():
    from tether.events import FinalResult, InterruptRaised

    agent = Agent(
        model=two_turns(("add", {"a": 1, "b": 2})), tools=[add], interventions=[AskFirst()]
    )
    events = [e async for e in agent.stream("go")]
    assert isinstance(events[-1], FinalResult)
    assert isinstance(events[-2], InterruptRaised)
    assert events[-2].interrupt == events[-1].result.interrupts[0]
    resumed = [e async for e in agent.resume_stream({})]  # nothing answered: still waiting
    assert [type(e).__name__ for e in resumed] == ["InterruptRaised", "FinalResult"]


# -- every interrupt raised at one point is one suspension -------------------------------


def _confirms(*labels: str) -> list[InterventionHandler]:
    handlers = []
    for label in labels:

        class Ask(InterventionHandler):
            name = label

            def before_tool_call(self, event: BeforeToolCall) -> Confirm:
                return Confirm(f"{self.name}: run {event.tool_call.name}?")

        handlers.append(Ask())
    return handlers


def _recording_deploy() -> tuple[list[str], Any]:
    """A ``deploy`` tool and the list of the envs it ran for."""
    runs: list[str] = []

    @tool
    def deploy(env: str) -> str:
        """Deploy."""
        runs.append(env)
        return "deployed"

    return runs, deploy


def test_two_hooks_interrupting_one_tool_call_are_asked_in_one_suspension():
    runs: list[str] = []

    @tool
    def deploy(env: str) -> str:
        """Deploy."""
        runs.append(env)
        return f"deployed to {env}"

    agent = Agent(model=two_turns(("deploy", {"env": "prod"})), tools=[deploy])
    agent.hooks.add(BeforeToolCall, lambda e: e.interrupt("security", "ok with security?"))
    agent.hooks.add(BeforeToolCall, lambda e: e.interrupt("finance", "ok with finance?"))
    result = agent("ship it")
    assert result.stop_reason == "interrupt"
    assert [i.name for i in result.interrupts] == ["security", "finance"]
    assert runs == []
    answers = {i.id: "yes" for i in result.interrupts}
    resumed = agent.resume(answers)
    assert resumed.stop_reason == "end_turn"  # not a second suspension
    assert runs == ["prod"]


def test_two_confirms_at_one_point_are_one_suspension_and_both_answers_count():
    runs, deploy = _recording_deploy()

    agent = Agent(
        model=two_turns(("deploy", {"env": "prod"})),
        tools=[deploy],
        interventions=_confirms("security", "finance"),
    )
    result = agent("ship it")
    assert [i.name for i in result.interrupts] == ["confirm:security", "confirm:finance"]
    first, second = result.interrupts
    # one approves, the other denies: the call does not run
    denied = agent.resume({first.id: "approve", second.id: "deny"})
    assert denied.stop_reason == "end_turn"
    assert runs == []
    assert agent.messages[2].tool_results[0].status == "denied"


def test_a_deny_after_a_pending_confirm_denies_without_asking():
    class Never(InterventionHandler):
        def before_tool_call(self, event: BeforeToolCall) -> Any:
            from tether.control import Deny

            return Deny("never on fridays")

    runs, deploy = _recording_deploy()

    agent = Agent(
        model=two_turns(("deploy", {"env": "prod"})),
        tools=[deploy],
        interventions=[*_confirms("security"), Never()],
    )
    result = agent("ship it")
    assert result.stop_reason == "end_turn"
    assert result.interrupts == []
    assert runs == []
    assert "never on fridays" in agent.messages[2].tool_results[0].content


def test_a_joined_signal_keeps_every_interrupt_in_order():
    from tether.control.interrupts import Interrupt

    a = Interrupt("a", "a", None, "hook", "before_tool_call")
    b = Interrupt("b", "b", None, "hook", "before_tool_call")
    joined = InterruptSignal.joined([InterruptSignal(a), InterruptSignal(b)])
    assert joined.interrupts == [a, b]
    assert joined.interrupt is a
    single = InterruptSignal(a)
    assert InterruptSignal.joined([single]) is single
