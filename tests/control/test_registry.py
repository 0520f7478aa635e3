"""Hook registration, ordering and dispatch (what the writes do in a run: test_hook_writes.py)."""

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from hook_agents import TOOL_TURN, make_agent

from tether import (
    HookError,
    Message,
)
from tether.control import (
    AfterInvocation,
    AfterMessageAdded,
    AfterModelCall,
    AfterToolCall,
    AgentInitialized,
    BeforeInvocation,
    BeforeModelCall,
    BeforeToolCall,
    HookEvent,
    HookOrder,
    HookProvider,
    HookRegistry,
)


def recorder(log: list[str], label: str) -> Callable[[Any], None]:
    def callback(event: Any) -> None:
        log.append(label)

    return callback


# -- ordering -------------------------------------------------------------------------


def test_hook_order_priorities() -> None:
    assert (
        HookOrder.SDK_FIRST
        < HookOrder.INTERVENTION_OUTPUT
        < HookOrder.DEFAULT
        < HookOrder.INTERVENTION_INPUT
        < HookOrder.SDK_LAST
    )


SCRAMBLED = [
    ("a", HookOrder.DEFAULT),
    ("b", HookOrder.DEFAULT),
    ("c", HookOrder.SDK_FIRST),
    ("d", HookOrder.SDK_LAST),
    ("e", HookOrder.SDK_FIRST),
    ("f", HookOrder.INTERVENTION_OUTPUT),
    ("g", HookOrder.INTERVENTION_INPUT),
    ("h", HookOrder.DEFAULT),
]
FORWARD = ["c", "e", "f", "a", "b", "h", "g", "d"]
REVERSED = ["e", "c", "f", "h", "b", "a", "g", "d"]


@pytest.mark.parametrize(
    ("event_type", "expected"),
    [
        (BeforeInvocation, FORWARD),
        (BeforeModelCall, FORWARD),
        (BeforeToolCall, FORWARD),
        (AfterModelCall, REVERSED),
        (AfterToolCall, REVERSED),
        (AfterInvocation, REVERSED),
        (AfterMessageAdded, FORWARD),
    ],
    ids=lambda v: v.__name__ if isinstance(v, type) else "",
)
def test_dispatch_order_in_a_run(event_type: type[HookEvent], expected: list[str]) -> None:
    agent, _ = make_agent(TOOL_TURN, "done")
    log: list[str] = []
    for label, order in SCRAMBLED:
        agent.hooks.add(event_type, recorder(log, label), order)
    result = agent("hi")
    assert result.stop_reason == "end_turn"
    per_emit = len(SCRAMBLED)
    assert len(log) % per_emit == 0
    assert log
    for start in range(0, len(log), per_emit):
        assert log[start : start + per_emit] == expected


async def test_registry_emit_orders_by_priority_then_registration() -> None:
    registry = HookRegistry()
    log: list[str] = []
    for label, order in SCRAMBLED:
        registry.add(AfterMessageAdded, recorder(log, label), order)
    event = AfterMessageAdded(None, Message.user("x"))  # type: ignore[arg-type]
    assert await registry.emit(event) is event
    assert log == FORWARD
    assert len(registry.callbacks(AfterMessageAdded)) == len(SCRAMBLED)


def test_default_priority_is_default() -> None:
    agent, _ = make_agent("done")
    log: list[str] = []
    agent.hooks.add(BeforeModelCall, recorder(log, "late"), HookOrder.DEFAULT + 1)
    agent.hooks.add(BeforeModelCall, recorder(log, "default"))
    agent.hooks.add(BeforeModelCall, recorder(log, "early"), HookOrder.DEFAULT - 1)
    agent("hi")
    assert log == ["early", "default", "late"]


def test_has_and_callbacks() -> None:
    agent, _ = make_agent("done")
    assert not agent.hooks.has(BeforeToolCall)
    assert agent.hooks.callbacks(BeforeToolCall) == []

    def first(event: BeforeToolCall) -> None: ...

    def second(event: BeforeToolCall) -> None: ...

    agent.hooks.add(BeforeToolCall, second)
    agent.hooks.add(BeforeToolCall, first, HookOrder.SDK_FIRST)
    assert agent.hooks.has(BeforeToolCall)
    assert not agent.hooks.has(AfterToolCall)
    assert agent.hooks.callbacks(BeforeToolCall) == [first, second]


# -- sync / async callbacks ---------------------------------------------------------------


def test_sync_async_and_async_callable_object_callbacks() -> None:
    agent, _ = make_agent(TOOL_TURN, "done")
    log: list[str] = []

    def sync_hook(event: BeforeToolCall) -> None:
        log.append("sync")

    async def async_hook(event: BeforeToolCall) -> None:
        await asyncio.sleep(0)
        log.append("async")

    class AsyncCallable:
        async def __call__(self, event: BeforeToolCall) -> None:
            await asyncio.sleep(0)
            log.append("object")
            event.cancel_tool = "cancelled by an async object"

    agent.hooks.add(BeforeToolCall, sync_hook)
    agent.hooks.add(BeforeToolCall, async_hook)
    agent.hooks.add(BeforeToolCall, AsyncCallable())
    agent("hi")
    assert log == ["sync", "async", "object"]
    # the async object's write (made after an await) took effect
    result = agent.messages[2].tool_results[0]
    assert result.content == "Denied: cancelled by an async object"
    assert result.status == "denied"


def test_async_hook_exception_becomes_hook_error() -> None:
    agent, _ = make_agent("done")

    async def failing(event: BeforeModelCall) -> None:
        await asyncio.sleep(0)
        raise LookupError("not found")

    agent.hooks.add(BeforeModelCall, failing)
    with pytest.raises(HookError) as info:
        agent("hi")
    assert str(info.value) == (
        f"hook {failing.__qualname__!r} raised LookupError during BeforeModelCall: not found"
    )
    assert isinstance(info.value.__cause__, LookupError)


# -- providers and the decorator ---------------------------------------------------------------


class Auditor:
    def __init__(self) -> None:
        self.log: list[str] = []

    def register_hooks(self, registry: HookRegistry) -> None:
        registry.add(BeforeInvocation, lambda e: self.log.append("start"))
        registry.add(BeforeToolCall, self.before_tool)
        registry.add(AfterInvocation, lambda e: self.log.append(f"end:{e.result.stop_reason}"))

    def before_tool(self, event: BeforeToolCall) -> None:
        self.log.append(f"tool:{event.tool_call.name}")


def test_hook_provider_registers_its_callbacks() -> None:
    auditor = Auditor()
    assert isinstance(auditor, HookProvider)
    agent, _ = make_agent(TOOL_TURN, "done", hooks=[auditor])
    assert agent.hooks.has(BeforeToolCall)
    assert agent.hooks.callbacks(BeforeToolCall) == [auditor.before_tool]
    agent("hi")
    assert auditor.log == ["start", "tool:add", "end:end_turn"]


def test_on_decorator_registers_and_returns_the_function() -> None:
    runs: list[Any] = []
    agent, _ = make_agent(TOOL_TURN, "done", runs=runs)
    log: list[str] = []

    @agent.on(BeforeToolCall)
    def deny_all(event: BeforeToolCall) -> None:
        log.append(event.tool_call.name)
        event.cancel_tool = "decorated"

    @agent.on(BeforeToolCall, HookOrder.SDK_FIRST)
    def first(event: BeforeToolCall) -> None:
        log.append("first")

    assert callable(deny_all)
    assert deny_all.__name__ == "deny_all"
    assert agent.hooks.callbacks(BeforeToolCall) == [first, deny_all]
    agent("hi")
    assert log == ["first", "add"]
    assert runs == []
    assert agent.messages[2].tool_results[0].content == "Denied: decorated"


# -- registration errors ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad", [str, int, object, "BeforeToolCall", None], ids=["str", "int", "object", "a-str", "None"]
)
def test_registering_for_a_non_event_type_is_a_type_error(bad: Any) -> None:
    agent, _ = make_agent("done")
    with pytest.raises(
        TypeError, match=r"hooks\.add expects a hook event type such as BeforeToolCall"
    ):
        agent.hooks.add(bad, lambda e: None)
    with pytest.raises(TypeError, match=r"hooks\.add expects a hook event type"):

        @agent.on(bad)
        def hook(event: Any) -> None: ...

    assert agent.hooks.callbacks(bad if isinstance(bad, type) else BeforeToolCall) == []


def test_registering_for_an_event_instance_is_a_type_error() -> None:
    agent, _ = make_agent("done")
    instance = BeforeInvocation(agent, [])
    with pytest.raises(TypeError, match=r"expects a hook event type .*got BeforeInvocation\("):
        agent.hooks.add(instance, lambda e: None)  # type: ignore[arg-type]


def test_registering_for_hook_event_itself_is_a_type_error() -> None:
    agent, _ = make_agent("done")
    with pytest.raises(TypeError, match="not HookEvent itself"):
        agent.hooks.add(HookEvent, lambda e: None)
    assert not agent.hooks.has(HookEvent)


def test_a_non_callable_callback_is_a_type_error() -> None:
    agent, _ = make_agent("done")
    with pytest.raises(TypeError, match="hook callback for BeforeToolCall is not callable: 42"):
        agent.hooks.add(BeforeToolCall, 42)  # type: ignore[arg-type]
    assert not agent.hooks.has(BeforeToolCall)


@pytest.mark.parametrize("bad", [object(), lambda registry: None, "provider"])
def test_a_non_provider_in_hooks_is_a_type_error(bad: Any) -> None:
    with pytest.raises(TypeError) as info:
        make_agent("done", hooks=[bad])
    assert "hooks=[...] takes HookProvider objects" in str(info.value)
    assert type(bad).__name__ in str(info.value)


# -- AgentInitialized and AfterMessageAdded ---------------------------------------------------------


def test_agent_initialized_fires_once_with_the_agent() -> None:
    seen: list[Any] = []

    class Init:
        def register_hooks(self, registry: HookRegistry) -> None:
            registry.add(AgentInitialized, lambda e: seen.append((e.agent, len(e.agent.tools))))

    agent, _ = make_agent("one", "two", hooks=[Init()])
    assert seen == [(agent, 2)]
    agent("hi")
    agent("again")
    assert seen == [(agent, 2)]


def test_agent_initialized_refuses_async_callbacks() -> None:
    async def too_async(event: AgentInitialized) -> None: ...

    class Init:
        def register_hooks(self, registry: HookRegistry) -> None:
            registry.add(AgentInitialized, too_async)

    with pytest.raises(TypeError) as info:
        make_agent("done", hooks=[Init()])
    message = str(info.value)
    assert f"hook {too_async.__qualname__!r} for AgentInitialized is async" in message
    assert "Agent.__init__" in message
    assert "plain function" in message


def test_agent_initialized_refuses_a_callback_returning_a_coroutine() -> None:
    seen: list[Any] = []

    async def record(event: AgentInitialized) -> None:
        seen.append(event)

    class Init:
        def register_hooks(self, registry: HookRegistry) -> None:
            registry.add(AgentInitialized, lambda e: record(e))

    with pytest.raises(TypeError) as info:
        make_agent("done", hooks=[Init()])
    message = str(info.value)
    assert "for AgentInitialized returned an awaitable" in message
    assert "make the callback a plain function" in message
    assert seen == []


def test_agent_initialized_refuses_async_before_running_any_callback() -> None:
    ran: list[str] = []

    async def too_async(event: AgentInitialized) -> None: ...

    class Init:
        def register_hooks(self, registry: HookRegistry) -> None:
            registry.add(AgentInitialized, lambda e: ran.append("sync"))
            registry.add(AgentInitialized, too_async)

    with pytest.raises(TypeError, match="is async"):
        make_agent("done", hooks=[Init()])
    assert ran == []


def test_a_callback_returning_an_awaitable_is_awaited_in_a_run() -> None:
    agent, _ = make_agent(TOOL_TURN, "done")
    log: list[str] = []

    async def deny(event: BeforeToolCall) -> None:
        await asyncio.sleep(0)
        log.append("awaited")
        event.cancel_tool = "via a returned coroutine"

    agent.hooks.add(BeforeToolCall, lambda e: deny(e))
    agent("hi")
    assert log == ["awaited"]
    assert agent.messages[2].tool_results[0].content == "Denied: via a returned coroutine"


def test_agent_initialized_hook_failure_is_a_hook_error() -> None:
    def broken(event: AgentInitialized) -> None:
        raise KeyError("config")

    class Init:
        def register_hooks(self, registry: HookRegistry) -> None:
            registry.add(AgentInitialized, broken)

    with pytest.raises(HookError, match="raised KeyError during AgentInitialized"):
        make_agent("done", hooks=[Init()])


# -- interrupts raised by several hooks at one point ----------------------------------


def test_two_hooks_raising_interrupts_with_one_name_at_one_point_are_refused() -> None:
    from tether import Agent, tool
    from tether.models import ScriptedModel

    runs: list[str] = []

    @tool
    def deploy(env: str) -> str:
        """Deploy."""
        runs.append(env)
        return "deployed"

    def security(event: BeforeToolCall) -> None:
        event.interrupt("approval", "ok with security?")

    def finance(event: BeforeToolCall) -> None:
        event.interrupt("approval", "ok with finance?")

    turns = [{"tool_calls": [{"name": "deploy", "args": {"env": "prod"}}]}, "done"]
    agent = Agent(model=ScriptedModel(turns), tools=[deploy])
    agent.hooks.add(BeforeToolCall, security)
    agent.hooks.add(BeforeToolCall, finance)
    with pytest.raises(HookError) as raised:
        agent("ship it")
    message = str(raised.value)
    assert ".security'" in message
    assert ".finance'" in message
    assert "interrupt 'approval'" in message
    assert "during BeforeToolCall" in message
    assert runs == []  # neither question was answered by the other's answer
    assert agent.pending_interrupts == []
    assert raised.value.result is not None
    assert raised.value.result.stop_reason == "error"
    assert agent.messages[-1].tool_results[0].status == "error"  # the history stays valid


def test_the_same_name_from_two_hooks_before_a_model_call_is_refused_too() -> None:
    from tether import Agent
    from tether.models import ScriptedModel

    agent = Agent(model=ScriptedModel(["never"]))
    agent.hooks.add(BeforeModelCall, lambda e: e.interrupt("pause", None))
    agent.hooks.add(BeforeModelCall, lambda e: e.interrupt("pause", None))
    with pytest.raises(
        HookError, match=r"hooks '.*<lambda>' and '.*<lambda>' both raised interrupt 'pause'"
    ):
        agent("go")


def test_distinct_names_from_two_hooks_still_join_into_one_suspension() -> None:
    from tether import Agent
    from tether.models import ScriptedModel

    agent = Agent(model=ScriptedModel(["ok"]))
    agent.hooks.add(BeforeModelCall, lambda e: e.interrupt("legal", None))
    agent.hooks.add(BeforeModelCall, lambda e: e.interrupt("finance", None))
    result = agent("go")
    assert [i.name for i in result.interrupts] == ["legal", "finance"]
    assert len({i.id for i in result.interrupts}) == 2
    assert agent.resume({i.id: True for i in result.interrupts}).text == "ok"
