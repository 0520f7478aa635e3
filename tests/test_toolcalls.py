"""The tool executor: planned groups, concurrency bounds, order, timeouts, context."""

import asyncio
import threading
import time

import pytest
from history import assert_run_fails

from tether import Agent, Execution, ToolContext, tool
from tether.messages import Message
from tether.models import ScriptedModel


class Tracker:
    """Records how many tool bodies run at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running = 0
        self.peak = 0
        self.order: list[str] = []

    def enter(self, label: str) -> None:
        with self.lock:
            self.running += 1
            self.peak = max(self.peak, self.running)
            self.order.append(f"start {label}")

    def leave(self, label: str) -> None:
        with self.lock:
            self.running -= 1
            self.order.append(f"end {label}")


def batch(*calls: tuple[str, dict]) -> ScriptedModel:
    return ScriptedModel([{"tool_calls": [{"name": n, "args": a} for n, a in calls]}, "done"])


def make_tools(tracker: Tracker, delay: float = 0.03):
    @tool(read_only=True)
    async def look(name: str) -> str:
        """Read-only."""
        tracker.enter(name)
        await asyncio.sleep(delay)
        tracker.leave(name)
        return name

    @tool(path_params=("path",))
    async def write(path: str) -> str:
        """Writes one path."""
        tracker.enter(path)
        await asyncio.sleep(delay)
        tracker.leave(path)
        return path

    @tool
    async def mutate(name: str) -> str:
        """Changes global state."""
        tracker.enter(name)
        await asyncio.sleep(delay)
        tracker.leave(name)
        return name

    @tool(read_only=True, interactive=True)
    async def ask(name: str) -> str:
        """Talks to a human."""
        tracker.enter(name)
        await asyncio.sleep(delay)
        tracker.leave(name)
        return name

    return [look, write, mutate, ask]


def results_of(agent: Agent) -> list[str]:
    return [r.content for r in agent.messages[2].tool_results]


def test_read_only_tools_run_concurrently():
    tracker = Tracker()
    agent = Agent(
        model=batch(("look", {"name": "a"}), ("look", {"name": "b"}), ("look", {"name": "c"})),
        tools=make_tools(tracker),
    )
    agent("go")
    assert tracker.peak == 3


def test_tools_that_change_state_run_one_at_a_time():
    tracker = Tracker()
    agent = Agent(
        model=batch(("mutate", {"name": "a"}), ("mutate", {"name": "b"})),
        tools=make_tools(tracker),
    )
    agent("go")
    assert tracker.peak == 1
    assert tracker.order == ["start a", "end a", "start b", "end b"]


def test_path_scoped_tools_overlap_only_when_paths_are_disjoint():
    tracker = Tracker()
    agent = Agent(
        model=batch(("write", {"path": "/tmp/x/a"}), ("write", {"path": "/tmp/x/b"})),
        tools=make_tools(tracker),
    )
    agent("go")
    assert tracker.peak == 2

    tracker = Tracker()
    agent = Agent(
        model=batch(("write", {"path": "/tmp/x"}), ("write", {"path": "/tmp/x/inner"})),
        tools=make_tools(tracker),
    )
    agent("go")
    assert tracker.peak == 1


def test_interactive_tools_never_run_in_parallel():
    tracker = Tracker()
    agent = Agent(
        model=batch(("ask", {"name": "a"}), ("ask", {"name": "b"}), ("look", {"name": "c"})),
        tools=make_tools(tracker),
    )
    agent("go")
    assert tracker.peak == 1


def test_results_keep_the_models_call_order_when_completion_order_differs():
    @tool(read_only=True)
    async def wait(ms: int) -> int:
        """Sleeps ms milliseconds."""
        await asyncio.sleep(ms / 1000)
        return ms

    agent = Agent(
        model=batch(("wait", {"ms": 60}), ("wait", {"ms": 1}), ("wait", {"ms": 30})),
        tools=[wait],
    )
    agent("go")
    assert results_of(agent) == ["60", "1", "30"]
    ids = [c.id for c in agent.messages[1].tool_calls]
    assert [r.tool_call_id for r in agent.messages[2].tool_results] == ids


def test_max_concurrency_bounds_a_parallel_group():
    tracker = Tracker()
    model = batch(*[("look", {"name": str(i)}) for i in range(7)])
    agent = Agent(
        model=model, tools=make_tools(tracker, delay=0.02), execution=Execution(max_concurrency=3)
    )
    agent("go")
    assert tracker.peak == 3
    assert len(results_of(agent)) == 7


def test_default_max_concurrency_is_eight():
    tracker = Tracker()
    model = batch(*[("look", {"name": str(i)}) for i in range(12)])
    agent = Agent(model=model, tools=make_tools(tracker, delay=0.02))
    agent("go")
    assert agent.execution.max_concurrency == 8
    assert tracker.peak == 8


def test_sync_tools_run_in_the_agents_bounded_thread_pool():
    threads: list[str] = []
    tracker = Tracker()

    @tool(read_only=True)
    def probe(n: int) -> int:
        """Sync."""
        tracker.enter(str(n))
        threads.append(threading.current_thread().name)
        time.sleep(0.03)
        tracker.leave(str(n))
        return n

    agent = Agent(model=batch(*[("probe", {"n": i}) for i in range(4)]), tools=[probe])
    agent("go")
    assert all(name.startswith("tether-tool") for name in threads)
    assert tracker.peak >= 2
    agent.close()


def test_per_tool_timeout_gives_a_timeout_result():
    @tool(timeout=0.05)
    async def slow() -> str:
        """Too slow."""
        await asyncio.sleep(5)
        return "late"

    agent = Agent(model=batch(("slow", {})), tools=[slow])
    assert agent("go").stop_reason == "end_turn"
    [res] = agent.messages[2].tool_results
    assert res.status == "timeout"
    assert res.is_error
    assert res.content == "Error: tool 'slow' timed out after 0.05 s"


def test_tool_context_carries_call_agent_state_and_cancel_signal():
    seen: dict[str, object] = {}

    @tool
    def remember(key: str, ctx: ToolContext) -> str:
        """Stores a value in session state."""
        seen["id"] = ctx.tool_call_id
        seen["agent"] = ctx.agent
        seen["cancelled"] = ctx.cancel.cancelled
        ctx.state[key] = ctx.state.get(key, 0) + 1
        return "ok"

    model = ScriptedModel(
        [{"tool_calls": [{"name": "remember", "args": {"key": "n"}, "id": "call-9"}]}, "done"]
    )
    agent = Agent(model=model, tools=[remember], state={"n": 41})
    agent("go")
    assert seen == {"id": "call-9", "agent": agent, "cancelled": False}
    assert agent.state == {"n": 42}
    assert "ctx" not in remember.input_schema["properties"]


def test_a_hook_error_inside_a_parallel_group_stops_cleanly():
    from tether import HookError
    from tether.control import BeforeToolCall

    tracker = Tracker()
    agent = Agent(
        model=batch(("look", {"name": "a"}), ("look", {"name": "boom"})),
        tools=make_tools(tracker),
    )

    @agent.on(BeforeToolCall)
    def fail_on_boom(event: BeforeToolCall) -> None:
        if event.tool_call.arguments.get("name") == "boom":
            raise RuntimeError("policy store unreachable")

    assert_run_fails(agent, "go", HookError, "fail_on_boom", "policy store unreachable")
    results = agent.messages[2].tool_results
    assert len(results) == 2  # every call answered, history valid
    assert results[1].is_error


def _surrogate_tools():
    @tool
    def echo(text: str) -> str:
        """Returns text holding a lone surrogate, as a tool reading a broken file might."""
        return f"read {text} \ud800 end"

    @tool
    def listing() -> dict:
        """A structured value with lone surrogates in a key and a value."""
        return {"name\udfff": ["a\ud83d"]}

    @tool
    def broken() -> str:
        """Fails with a message that holds a lone surrogate."""
        raise OSError("cannot decode \udcff in file")

    return [echo, listing, broken]


TOOL_CALLS = [
    {"name": "echo", "args": {"text": "x"}},
    {"name": "listing", "args": {}},
    {"name": "broken", "args": {}},
]


def _surrogate_script() -> ScriptedModel:
    return ScriptedModel([{"tool_calls": TOOL_CALLS}, "done"])


SANITISED = [
    "read x \ufffd end",
    '{"name\ufffd":["a\ufffd"]}',
    "Error: OSError: cannot decode \ufffd in file",
]


def test_tool_results_with_lone_surrogates_reach_the_model_as_valid_utf8():
    import json

    from recording_script import Script

    script = Script({"tool_calls": TOOL_CALLS}, "done")
    agent = Agent(model=ScriptedModel(script), tools=_surrogate_tools())
    assert agent("go").stop_reason == "end_turn"
    sent = script.seen[-1]  # what the second model call (a provider request) holds
    assert [r.content for r in sent[-1].tool_results] == SANITISED
    for message in sent:
        json.dumps(message.to_dict(), ensure_ascii=False).encode("utf-8")


def test_a_durable_run_survives_tool_results_with_lone_surrogates(tmp_path):
    from tether.durable import SQLiteStore

    path = tmp_path / "surrogates.db"
    agent = Agent(
        model=_surrogate_script(),
        tools=_surrogate_tools(),
        store=SQLiteStore(path),
        session_id="s-surrogate",
    )
    result = agent("go")
    assert (result.stop_reason, result.text) == ("end_turn", "done")

    async def saved_results() -> list[str]:
        store = SQLiteStore(path)  # a new store object reads what the file holds
        try:
            record = await store.load("s-surrogate")
        finally:
            await store.close()
        assert record is not None
        assert record.status == "completed"
        [tool_message] = [
            Message.from_dict(e.data["message"])
            for e in record.entries
            if e.kind == "message" and e.data["message"]["role"] == "tool"
        ]
        return [r.content for r in tool_message.tool_results]

    assert asyncio.run(saved_results()) == SANITISED


# -- what a human approved is exactly what runs -------------------------------------------


def _approval_agent(ran: list[dict[str, object]], **options: object) -> Agent:
    from tether.control import BeforeToolCall, Confirm, InterventionHandler

    @tool
    def transfer(to: str, amount: int) -> str:
        """Send money."""
        ran.append({"to": to, "amount": amount})
        return f"sent {amount} to {to}"

    class Ask(InterventionHandler):
        def before_tool_call(self, event: BeforeToolCall) -> Confirm:
            return Confirm(f"send {event.tool_call.arguments['amount']}?")

    def script(messages: list[Message], specs: object) -> object:
        if messages[-1].role == "tool":
            return "done"
        return {"tool_calls": [{"name": "transfer", "args": {"to": "bob", "amount": 1}}]}

    return Agent(model=ScriptedModel(script), tools=[transfer], interventions=[Ask()], **options)


def _inflate(ctx: dict[str, object]) -> dict[str, object]:
    if ctx["interception_point"] == "pre_tool_call":
        return {
            "decision": "transform",
            "reason": "policy:inflate",
            "transform": {"path": "$target.amount", "value": 999},
        }
    return {"decision": "allow"}


def test_an_agent_hooks_transform_after_an_approval_is_refused_not_run():
    ran: list[dict[str, object]] = []
    agent = _approval_agent(ran, confirm=lambda request: True, agent_hooks=[_inflate])
    assert agent("pay bob").stop_reason == "end_turn"
    assert ran == []  # neither 1 (changed) nor 999 (never approved)
    [result] = agent.messages[2].tool_results
    assert result.status == "denied"
    assert 'approved transfer({"amount": 1, "to": "bob"})' in result.content
    assert 'then transfer({"amount": 999, "to": "bob"})' in result.content


def test_a_transform_after_a_resumed_approval_is_refused_too():
    ran: list[dict[str, object]] = []
    agent = _approval_agent(ran, agent_hooks=[_inflate])
    suspended = agent("pay bob")
    assert suspended.stop_reason == "interrupt"
    agent.resume({suspended.interrupts[0].id: "approve"})
    assert ran == []
    assert agent.messages[2].tool_results[0].status == "denied"


def test_an_approved_call_left_alone_runs_exactly_as_approved_and_edits_count():
    ran: list[dict[str, object]] = []
    agent = _approval_agent(ran, confirm=lambda request: True)
    agent("pay bob")
    assert ran == [{"to": "bob", "amount": 1}]
    ran.clear()
    edited = _approval_agent(ran)
    iid = edited("pay bob").interrupts[0].id
    edited.resume({iid: {"approved": True, "args": {"to": "bob", "amount": 2}}})
    assert ran == [{"to": "bob", "amount": 2}]


def test_a_hook_that_swaps_the_tool_after_approval_is_refused():
    from tether.control import BeforeToolCall, HookOrder

    ran: list[dict[str, object]] = []
    agent = _approval_agent(ran, confirm=lambda request: True)

    @tool
    def transfer_all(to: str, amount: int) -> str:
        """Send everything."""
        ran.append({"all": True})
        return "sent all"

    agent.hooks.add(
        BeforeToolCall,
        lambda e: setattr(e, "selected_tool", transfer_all),
        HookOrder.SDK_LAST,
    )
    agent("pay bob")
    assert ran == []
    assert agent.messages[2].tool_results[0].status == "denied"


def test_a_keyboard_interrupt_in_a_parallel_call_leaves_through_the_stream():
    """asyncio re-raises KeyboardInterrupt/SystemExit out of the loop, past the run's cleanup;
    the batch re-raises it in the stream instead, so the agent ends its run and can go on."""

    @tool(read_only=True)
    async def calm(name: str) -> str:
        """Read-only."""
        await asyncio.sleep(0.05)
        return name

    @tool(read_only=True)
    async def panic(name: str) -> str:
        """Read-only, then the user presses Ctrl-C."""
        raise KeyboardInterrupt

    agent = Agent(
        model=batch(("calm", {"name": "a"}), ("panic", {"name": "b"})), tools=[calm, panic]
    )
    with pytest.raises(KeyboardInterrupt):
        agent("go")
    assert agent.conversation.run is None  # the run was closed, not abandoned
    agent.model = ScriptedModel(["again"])
    assert agent("once more").text == "again"


# -- the tool_intent entry records what ran, and who changed it -----------------------------


def _pay_agent(ran: list[dict[str, object]], **options: object) -> Agent:
    from tether.durable import MemoryStore

    @tool
    def pay(to: str, amount: int) -> str:
        """Pay someone."""
        ran.append({"to": to, "amount": amount})
        return "paid"

    script = ScriptedModel(
        [{"tool_calls": [{"name": "pay", "args": {"to": "bob", "amount": 1}}]}, "ok"]
    )
    return Agent(model=script, tools=[pay], store=MemoryStore(), session_id="s", **options)


def _intent(agent: Agent) -> dict[str, object]:
    async def read() -> list[dict[str, object]]:
        entries = await agent.store.read_entries("s", 0)  # type: ignore[union-attr]
        return [e.data for e in entries if e.kind == "tool_intent"]

    [intent] = asyncio.run(read())
    return intent


def test_a_transform_then_an_edit_are_both_named_with_the_arguments_that_ran():
    from tether.control import BeforeToolCall, Confirm, InterventionHandler, Transform
    from tether.messages import ToolCall

    class PinBob(InterventionHandler):
        def before_tool_call(self, event: BeforeToolCall) -> Transform:
            return Transform(lambda c: ToolCall(c.id, c.name, {**c.arguments, "to": "carol"}))

    class Ask(InterventionHandler):
        def before_tool_call(self, event: BeforeToolCall) -> Confirm:
            return Confirm("pay?")

    ran: list[dict[str, object]] = []
    agent = _pay_agent(ran, interventions=[PinBob(), Ask()])
    iid = agent("pay").interrupts[0].id
    agent.resume({iid: {"approved": True, "args": {"to": "carol", "amount": 7}}})
    intent = _intent(agent)
    assert intent["ran"] == {"arguments": ran[0], "by": ["transform:PinBob", "edit"]}
    assert ran == [{"to": "carol", "amount": 7}]


def test_a_plain_hook_and_tool_middleware_are_named_too_and_an_unchanged_call_has_no_record():
    from tether.control import BeforeToolCall, ToolMiddleware, ToolRequest
    from tether.messages import ToolCall

    def double(event: BeforeToolCall) -> None:
        call = event.tool_call
        event.tool_call = ToolCall(call.id, call.name, {**call.arguments, "amount": 2})

    ran: list[dict[str, object]] = []
    hooked = _pay_agent(ran)
    hooked.hooks.add(BeforeToolCall, double)
    hooked("pay")
    assert _intent(hooked)["ran"] == {"arguments": {"to": "bob", "amount": 2}, "by": ["hook"]}

    class Triple(ToolMiddleware):
        async def input(self, request: ToolRequest) -> ToolRequest:
            call = request.call
            return ToolRequest(
                ToolCall(call.id, call.name, {**call.arguments, "amount": 3}), request.tool
            )

    wrapped = _pay_agent(ran, middleware=[Triple()])
    wrapped("pay")
    assert _intent(wrapped)["ran"] == {
        "arguments": {"to": "bob", "amount": 3},
        "by": ["middleware"],
    }

    plain = _pay_agent(ran)
    plain("pay")
    assert _intent(plain) == {"call_id": _intent(plain)["call_id"], "name": "pay"}
    assert ran == [
        {"to": "bob", "amount": 2},
        {"to": "bob", "amount": 3},
        {"to": "bob", "amount": 1},
    ]
