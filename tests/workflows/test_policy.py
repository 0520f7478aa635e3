"""Policy at every node: the workflow's interventions, AGENT-HOOKS host, approvals, confirm,
limits, budget and cancel."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tether import Agent, IterationBudget, Limits, tool
from tether.control import BeforeToolCall, Confirm, Deny, InterventionHandler
from tether.durable import Store
from tether.models import ScriptedModel
from tether.workflows import Graph, Loop, Parallel, Sequential, StepContext, Swarm

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from workflow_agents import Backend, ConfirmWrites, echo, effects_of, no_secrets, writer


def _writer_agent(name: str, effects: Path, **kwargs: Any) -> Agent:
    @tool
    def write(text: str) -> str:
        """Write text."""
        with effects.open("a", encoding="utf-8") as f:
            f.write(f"{text}\n")
        return f"ok {text}"

    return Agent(writer(name), tools=[write], name=name, **kwargs)


def durable(stores: Callable[[], Store], session_id: str) -> dict[str, Any]:
    """The workflow's session in the test's store (MemoryStore, SQLite, PostgreSQL)."""
    return {"store": stores(), "session_id": session_id}


class DenyWrites(InterventionHandler):
    def before_tool_call(self, event: BeforeToolCall) -> Deny | None:
        return Deny("no writes here") if event.tool_call.name == "write" else None


async def test_a_workflow_policy_denies_a_tool_in_a_node_at_any_depth(
    stores: Callable[[], Store], tmp_path: Path
) -> None:
    effects = tmp_path / "effects"
    wf = Sequential(
        Parallel(_writer_agent("deep", effects)),
        interventions=[DenyWrites()],
        name="guarded",
        **durable(stores, "deny-1"),
    )
    result = await wf.invoke_async("go")
    assert result.stop_reason == "end_turn"
    assert "no writes here" in result.text
    assert effects_of(effects) == []  # putting the step in a workflow does not escape policy


async def test_a_nodes_own_policy_adds_to_the_workflows(
    stores: Callable[[], Store], tmp_path: Path
) -> None:
    seen: list[str] = []

    class Record(InterventionHandler):
        def __init__(self, who: str) -> None:
            self.who = who

        def before_tool_call(self, event: BeforeToolCall) -> None:
            seen.append(f"{self.who}:{event.agent.path}")

    effects = tmp_path / "effects"
    node = _writer_agent("w", effects, interventions=[Record("node")])
    wf = Sequential(node, interventions=[Record("workflow")], **durable(stores, "own-1"))
    assert (await wf.invoke_async("go")).stop_reason == "end_turn"
    # the node's own first, then the workflow's; both in the node (and the workflow's own
    # call of the node, at the top)
    assert seen == ["workflow:", "node:w#1", "workflow:w#1"]
    assert effects_of(effects) == ["w"]


async def test_the_workflows_confirm_callback_answers_a_nodes_confirm(
    stores: Callable[[], Store], tmp_path: Path
) -> None:
    effects = tmp_path / "effects"
    asked: list[str] = []

    def confirm(request: Any) -> bool:
        asked.append(request.prompt)
        return True

    wf = Sequential(
        _writer_agent("a", effects),
        interventions=[ConfirmWrites()],
        confirm=confirm,
        **durable(stores, "confirm-1"),
    )
    result = await wf.invoke_async("go")
    assert result.stop_reason == "end_turn"
    assert asked == ["write 'a'?"]
    assert effects_of(effects) == ["a"]


async def test_limits_count_across_the_whole_workflow(stores: Callable[[], Store]) -> None:
    ran: list[str] = []

    def agent(name: str) -> Agent:
        def turn(messages: list[Any], specs: list[Any]) -> Any:
            ran.append(name)
            return f"{name}: " + "word " * 200

        return Agent(ScriptedModel(turn), name=name)

    wf = Sequential(
        agent("a"),
        agent("b"),
        agent("c"),
        limits=Limits(total_tokens=150),
        **durable(stores, "limits-1"),
    )
    result = await wf.invoke_async("go")
    assert result.stop_reason == "limit_total_tokens"
    assert ran == ["a"]  # a's tokens count against the workflow: b and c never start


async def test_an_iteration_budget_is_shared_by_every_node_and_the_workflows_steps_are_free(
    stores: Callable[[], Store],
) -> None:
    calls: list[str] = []

    def turn(messages: list[Any], specs: list[Any]) -> str:
        calls.append("x")
        return "again"

    wf = Loop(
        Agent(ScriptedModel(turn), name="x"),
        until=lambda out: False,
        max_rounds=10,
        budget=IterationBudget(4),
        **durable(stores, "budget-1"),
    )
    result = await wf.invoke_async("go")
    assert result.stop_reason == "budget_exhausted"
    assert (
        result.reason == "the iteration budget is used up; workflow:loop stops before its next node"
    )
    assert len(calls) == 4  # four units, four node model calls: deciding the next node is free
    assert result.usage.model_calls == 4


async def test_a_node_stopped_by_the_budget_stops_the_workflow_with_that_reason(
    stores: Callable[[], Store],
) -> None:
    def turn(messages: list[Any], specs: list[Any]) -> str:
        return "done"

    wf = Sequential(
        Parallel(Agent(ScriptedModel(turn), name="x"), name="inner"),
        lambda step: "never",
        budget=IterationBudget(1),
        **durable(stores, "budget-2"),
    )
    result = await wf.invoke_async("go")
    assert result.stop_reason == "budget_exhausted"
    assert result.reason is not None
    assert result.reason.startswith("workflow node inner: ")
    assert "sub-agent inner#1 stopped with budget_exhausted" in result.reason


async def test_turn_limits_count_the_nodes_model_calls(stores: Callable[[], Store]) -> None:
    calls: list[str] = []

    def turn(messages: list[Any], specs: list[Any]) -> str:
        calls.append("x")
        return "again"

    wf = Loop(
        Agent(ScriptedModel(turn), name="x"),
        until=lambda out: False,
        max_rounds=10,
        limits=Limits(turns=3),
        **durable(stores, "turns-1"),
    )
    result = await wf.invoke_async("go")
    assert result.stop_reason == "limit_turns"
    assert len(calls) == 3


async def test_cancel_reaches_every_running_node(stores: Callable[[], Store]) -> None:
    started = asyncio.Event()
    waiting = asyncio.Event()
    outcome: list[str] = []

    async def slow(step: StepContext) -> str:
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            outcome.append("cancelled")
            raise
        return "slept"

    @tool
    async def wait_long() -> str:
        """Wait."""
        waiting.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            outcome.append("tool cancelled")
            raise
        return "waited"

    waiter = Agent(
        ScriptedModel(lambda m, s: {"tool_calls": [{"name": "wait_long", "args": {}}]}),
        tools=[wait_long],
        name="waiter",
    )
    wf = Sequential(Parallel(slow, waiter), echo_agent(), **durable(stores, "cancel-1"))
    running = asyncio.create_task(wf.invoke_async("go"))
    await asyncio.wait_for(started.wait(), 10)
    await asyncio.wait_for(waiting.wait(), 10)
    # from another thread, as a signal handler or a server's cancel endpoint would
    await asyncio.to_thread(wf.cancel)
    result = await asyncio.wait_for(running, 10)
    assert result.stop_reason == "cancelled"
    assert sorted(outcome) == ["cancelled", "tool cancelled"]
    record = await stores().load("cancel-1")  # a new store object reads the workflow's end
    assert record is not None
    assert record.status == "cancelled"


def echo_agent() -> Agent:
    return Agent(echo("after"), name="after")


async def test_the_workflows_agent_hooks_host_and_approvals_govern_a_node_three_deep(
    backend: Backend,
) -> None:
    first = await backend.build("governed").invoke_async("go")
    assert first.stop_reason == "interrupt", first.reason
    [pending] = first.interrupts
    assert pending.name == "mid#1/inner#1/guarded#1/confirm:ConfirmWrites"
    store = backend.store()
    [row] = await store.approvals.pending(session_id="gov-1")
    assert row.name == pending.name  # one inbox row, filed by the workflow's session
    assert row.arguments == {"text": "<hidden>"}  # with the workflow's redactor
    await store.approvals.decide(row.id, "approve", decided_by="alice")
    done = await backend.resume("governed", await store.approvals.answers_for("gov-1"))
    assert done["stop_reason"] == "end_turn", done
    # the host was attached again to the node the second process resumed: the read was denied
    assert done["text"] == (
        '["ok guarded / Denied: denied by AGENT-HOOKS at pre_tool_call: policy:no-secrets", "side"]'
    )
    assert effects_of(backend.effects) == ["guarded"]
    entries = await backend.store().read_entries("gov-1/mid#1.1/inner#1.1/guarded#1.1")
    hooks = [
        e.data["agent_hooks"] for e in entries if e.kind == "audit" and "agent_hooks" in e.data
    ]
    # the node's own session journals its AGENT-HOOKS records: one host session per run
    # (before the approval, after it), the secret read denied in the second
    assert [h["interception_point"] for h in hooks].count("agent_startup") == 2
    denied = [h["verdict"] for h in hooks if h["verdict"]["decision"] != "allow"]
    assert denied == [{"decision": "deny", "reason": "policy:no-secrets"}]


async def test_a_tool_call_limit_counts_the_nodes_tool_calls_not_the_node_runs(
    stores: Callable[[], Store], tmp_path: Path
) -> None:
    effects = tmp_path / "effects"

    def build(limit: int, session_id: str) -> Sequential:
        a, b = _writer_agent("a", effects), _writer_agent("b", effects)
        return Sequential(a, b, limits=Limits(tool_calls=limit), **durable(stores, session_id))

    # two node runs, one write each: two tool calls (running a node is not one)
    done = await build(3, "tools-1").invoke_async("go")
    assert done.stop_reason == "end_turn", done.reason
    assert done.usage.tool_calls == 2
    assert effects_of(effects) == ["a", "b"]
    stopped = await build(1, "tools-2").invoke_async("go")
    assert stopped.stop_reason == "limit_tool_calls"
    assert stopped.reason == "ran 1 tool call(s); the limit is 1"
    assert effects_of(effects) == ["a", "b", "a"]  # a's write was the one: b never ran


async def test_a_node_the_workflows_policy_denies_stops_the_workflow_as_blocked(
    stores: Callable[[], Store],
) -> None:
    from tether.control.agent_hooks import AgentHooksHost

    class DenyB(InterventionHandler):
        def before_tool_call(self, event: BeforeToolCall) -> Deny | None:
            return Deny("b is off today") if event.tool_call.name == "b" else None

    def deny_b(ctx: dict[str, Any]) -> dict[str, Any]:
        call = ctx.get("tool_call") or {}
        if ctx["interception_point"] == "pre_tool_call" and call.get("name") == "b":
            return {"decision": "deny", "reason": "b is off today"}
        return {"decision": "allow"}

    ran: list[str] = []

    def after(step: StepContext) -> str:
        ran.append("after")
        return "after"

    def build(session_id: str, **policy: Any) -> Sequential:
        a, b = Agent(echo("a"), name="a"), Agent(echo("b"), name="b")
        return Sequential(a, b, after, **durable(stores, session_id), **policy)

    # a governance decision is a stop reason, never an error; nothing after the node runs
    denied = await build("deny-b", interventions=[DenyB()]).invoke_async("go")
    assert denied.stop_reason == "blocked"
    assert denied.reason == "workflow node b: Denied: denied by policy 'DenyB': b is off today"
    host = AgentHooksHost([deny_b])
    hooked = await build("hook-b", agent_hooks=host).invoke_async("go")
    assert hooked.stop_reason == "blocked"
    assert hooked.reason == (
        "workflow node b: Denied: denied by AGENT-HOOKS at pre_tool_call: b is off today"
    )
    assert ran == []
    assert set(denied.usage.by_agent) == {"a#1"}  # a ran and was counted; b never started

    class ConfirmB(InterventionHandler):
        def before_tool_call(self, event: BeforeToolCall) -> Confirm | None:
            return Confirm("run b?") if event.tool_call.name == "b" else None

    [asked] = (await build("ask-b", interventions=[ConfirmB()]).invoke_async("go")).interrupts
    refused = await build("ask-b", interventions=[ConfirmB()]).resume_async({asked.id: "deny"})
    assert refused.stop_reason == "blocked"  # a human's no to the node run, on a new store object
    assert refused.reason is not None
    assert refused.reason.startswith("workflow node b: Denied: not confirmed (ConfirmB: run b?)")
    assert ran == []


def _secret_reader(read: list[str]) -> Agent:
    @tool
    def read_secret() -> str:
        """Read the secret."""
        read.append("secret")
        return "s3cr3t"

    def turn(messages: list[Any], specs: list[Any]) -> Any:
        if messages[-1].role == "tool":
            return "got " + messages[-1].tool_results[0].content
        return {"tool_calls": [{"name": "read_secret", "args": {}}]}

    return Agent(ScriptedModel(turn), tools=[read_secret], name="reader")


def _in_graph(step: Agent, **options: Any) -> Graph:
    graph = Graph(**options)
    graph.add_node("reader", step)
    graph.set_entry("reader")
    return graph


@pytest.mark.parametrize(
    "shape",
    [
        lambda step, **o: Loop(step, max_rounds=2, **o),
        _in_graph,
        lambda step, **o: Swarm([step, Agent(echo("other"), name="other")], entry="reader", **o),
        lambda step, **o: Sequential(Parallel(Loop(step, max_rounds=1)), **o),
    ],
    ids=["loop", "graph", "swarm", "sequential>parallel>loop"],
)
def test_the_workflows_agent_hooks_host_reaches_the_nodes_of_every_combinator(
    shape: Callable[..., Any],
) -> None:
    from tether.control.agent_hooks import AgentHooksHost

    read: list[str] = []
    result = shape(_secret_reader(read), agent_hooks=AgentHooksHost([no_secrets])).run("go")
    assert result.stop_reason == "end_turn"
    assert "got Denied: denied by AGENT-HOOKS at pre_tool_call: policy:no-secrets" in result.text
    assert read == []
