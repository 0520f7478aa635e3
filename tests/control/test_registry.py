"""Hook registration, ordering and dispatch, and what each event's writes do in a real run."""

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from recording_script import Script

from tether import (
    Agent,
    HookError,
    Message,
    ModelError,
    RetryLimitError,
    ToolCall,
    ToolResult,
    tool,
)
from tether.control import (
    AfterInvocation,
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
    MessageAdded,
)
from tether.messages import Usage
from tether.models import ModelResponse, ScriptedModel

TOOL_TURN = {"tool_calls": [{"name": "add", "args": {"a": 1, "b": 2}}]}


def make_agent(*turns: Any, runs: list[Any] | None = None, **kwargs: Any) -> tuple[Agent, Script]:
    """An agent with the tools add / sub / counter; ``runs`` records every tool run."""
    ran = runs if runs is not None else []

    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        ran.append(("add", a, b))
        return a + b

    @tool
    def sub(a: int, b: int) -> int:
        """Subtract."""
        ran.append(("sub", a, b))
        return a - b

    script = kwargs.pop("script", None) or Script(*turns)
    agent = Agent(model=ScriptedModel(script), tools=[add, sub], **kwargs)
    return agent, script


def recorder(log: list[str], label: str) -> Callable[[Any], None]:
    def callback(event: Any) -> None:
        log.append(label)

    return callback


def assert_history_valid(messages: list[Message]) -> None:
    """Every tool call of an assistant message is answered by the next (tool) message."""
    for index, message in enumerate(messages):
        if message.role == "assistant" and message.tool_calls:
            answer = messages[index + 1]
            assert answer.role == "tool"
            assert [r.tool_call_id for r in answer.tool_results] == [
                c.id for c in message.tool_calls
            ]


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
        registry.add(MessageAdded, recorder(log, label), order)
    event = MessageAdded(None, Message.user("x"))  # type: ignore[arg-type]
    assert await registry.emit(event) is event
    assert log == FORWARD
    assert len(registry.callbacks(MessageAdded)) == len(SCRAMBLED)


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
        self.log.append(f"tool:{event.tool_use.name}")


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
        log.append(event.tool_use.name)
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


# -- hook failures -----------------------------------------------------------------------


def test_hook_error_names_the_hook_and_event_and_keeps_history_valid() -> None:
    runs: list[Any] = []
    agent, script = make_agent(TOOL_TURN, "done", runs=runs)
    finished: list[Any] = []

    def exploding(event: BeforeToolCall) -> None:
        raise ValueError("kaboom")

    agent.hooks.add(BeforeToolCall, exploding)
    agent.hooks.add(AfterInvocation, lambda e: finished.append(e.result))
    with pytest.raises(HookError) as info:
        agent("hi")
    exc = info.value
    assert (
        str(exc)
        == f"hook {exploding.__qualname__!r} raised ValueError during BeforeToolCall: kaboom"
    )
    assert "exploding" in exploding.__qualname__
    assert isinstance(exc.__cause__, ValueError)
    assert exc.result is not None
    assert exc.result.stop_reason == "error"
    assert exc.result.reason == str(exc)
    assert finished == [exc.result]
    assert agent.last_result is exc.result
    # the tool did not run, the model was called once, the tool call has an error result
    assert runs == []
    assert script.calls == 1
    assert [m.role for m in agent.messages] == ["user", "assistant", "tool"]
    assert_history_valid(agent.messages)
    answer = agent.messages[2].tool_results[0]
    assert answer.is_error
    assert answer.status == "error"
    assert "kaboom" in answer.content


def test_writing_a_read_only_field_in_a_hook_fails_the_run() -> None:
    agent, _ = make_agent(TOOL_TURN, "done")

    def sneaky(event: AfterToolCall) -> None:
        event.tool_use = event.tool_use

    agent.hooks.add(AfterToolCall, sneaky)
    with pytest.raises(HookError) as info:
        agent("hi")
    assert "raised AttributeError during AfterToolCall" in str(info.value)
    assert "AfterToolCall.tool_use is read-only" in str(info.value)
    assert info.value.result is not None
    assert info.value.result.stop_reason == "error"
    assert_history_valid(agent.messages)


def test_a_failing_after_invocation_hook_turns_the_run_into_an_error() -> None:
    agent, _ = make_agent("done")

    def broken(event: AfterInvocation) -> None:
        raise RuntimeError("audit store down")

    agent.hooks.add(AfterInvocation, broken)
    with pytest.raises(
        HookError, match="raised RuntimeError during AfterInvocation: audit store down"
    ):
        agent("hi")
    assert agent.last_result is not None
    assert agent.last_result.stop_reason == "error"
    assert [m.role for m in agent.messages] == ["user", "assistant"]


# -- AgentInitialized and MessageAdded ---------------------------------------------------------


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


def test_message_added_sees_every_message_in_order() -> None:
    agent, _ = make_agent(TOOL_TURN, "3")
    seen: list[Message] = []
    agent.hooks.add(MessageAdded, lambda e: seen.append(e.message))
    agent("hi")
    assert [m.role for m in seen] == ["user", "assistant", "tool", "assistant"]
    assert all(a is b for a, b in zip(seen, agent.messages, strict=True))
    assert seen[2].tool_results[0].content == "3"
    assert seen[3].text == "3"


# -- BeforeToolCall writes -------------------------------------------------------------------


def test_before_tool_call_rewriting_tool_use_changes_what_runs() -> None:
    runs: list[Any] = []
    agent, script = make_agent(TOOL_TURN, "done", runs=runs)

    @agent.on(BeforeToolCall)
    def rewrite(event: BeforeToolCall) -> None:
        call = event.tool_use
        event.tool_use = ToolCall(call.id, call.name, {"a": 10, "b": 20})

    agent("hi")
    assert runs == [("add", 10, 20)]
    assert agent.messages[2].tool_results[0].content == "30"
    assert script.seen[1][-1].tool_results[0].content == "30"


def test_before_tool_call_selected_tool_swaps_the_tool() -> None:
    runs: list[Any] = []
    agent, _ = make_agent(TOOL_TURN, "done", runs=runs)

    @agent.on(BeforeToolCall)
    def swap(event: BeforeToolCall) -> None:
        assert event.selected_tool is agent.tool_map["add"]
        event.selected_tool = agent.tool_map["sub"]

    agent("hi")
    assert runs == [("sub", 1, 2)]
    result = agent.messages[2].tool_results[0]
    assert result.content == "-1"
    assert not result.is_error


@pytest.mark.parametrize(
    ("cancel", "text"),
    [
        (True, "Denied: the tool call was cancelled by a hook"),
        ("writes are frozen", "Denied: writes are frozen"),
    ],
)
def test_before_tool_call_cancel(cancel: bool | str, text: str) -> None:
    runs: list[Any] = []
    agent, script = make_agent(TOOL_TURN, "done", runs=runs)

    @agent.on(BeforeToolCall)
    def stop(event: BeforeToolCall) -> None:
        event.cancel_tool = cancel

    result = agent("hi")
    assert result.stop_reason == "end_turn"
    assert runs == []
    assert result.usage.tool_calls == 0
    sent = script.seen[1][-1].tool_results[0]
    assert sent.content == text
    assert sent.is_error is True
    assert sent.status == "denied"
    assert sent.tool_call_id == agent.messages[1].tool_calls[0].id


# -- AfterToolCall writes ---------------------------------------------------------------------


def test_after_tool_call_result_replacement_is_what_the_model_sees() -> None:
    agent, script = make_agent(TOOL_TURN, "done")

    @agent.on(AfterToolCall)
    def redact(event: AfterToolCall) -> None:
        assert event.result.content == "3"
        assert event.exception is None
        old = event.result
        event.result = ToolResult(old.tool_call_id, old.name, "[redacted]")

    agent("hi")
    assert script.seen[1][-1].role == "tool"
    assert script.seen[1][-1].tool_results[0].content == "[redacted]"
    assert agent.messages[2].tool_results[0].content == "[redacted]"


def test_after_tool_call_retry_runs_the_tool_again() -> None:
    attempts: list[int] = []

    @tool
    def flaky() -> str:
        """Fails the first time."""
        attempts.append(1)
        if len(attempts) == 1:
            raise ConnectionError("reset by peer")
        return f"ok after {len(attempts)}"

    script = Script({"tool_calls": [{"name": "flaky", "args": {}}]}, "done")
    agent = Agent(model=ScriptedModel(script), tools=[flaky])
    seen: list[tuple[str, str | None]] = []

    @agent.on(AfterToolCall)
    def retry_failures(event: AfterToolCall) -> None:
        seen.append(
            (event.result.content, type(event.exception).__name__ if event.exception else None)
        )
        if event.exception is not None:
            event.retry = True

    result = agent("hi")
    assert result.stop_reason == "end_turn"
    assert len(attempts) == 2
    assert seen == [
        ("Error: ConnectionError: reset by peer", "ConnectionError"),
        ("ok after 2", None),
    ]
    assert script.seen[1][-1].tool_results[0].content == "ok after 2"


def test_after_tool_call_retry_is_bounded() -> None:
    runs: list[Any] = []
    agent, script = make_agent(TOOL_TURN, "done", runs=runs, max_retries=2)

    @agent.on(AfterToolCall)
    def again(event: AfterToolCall) -> None:
        if len(runs) < 20:  # a broken bound fails the test instead of looping forever
            event.retry = True

    with pytest.raises(RetryLimitError) as info:
        agent("hi")
    call_id = agent.messages[1].tool_calls[0].id
    assert str(info.value) == (
        f"AfterToolCall hooks asked to retry tool 'add' (call {call_id}) 3 times; "
        "the limit is 2 (Agent(max_retries=...))."
    )
    assert len(runs) == 3  # the first run and two retries
    assert info.value.result is not None
    assert info.value.result.stop_reason == "error"
    assert script.calls == 1
    assert [m.role for m in agent.messages] == ["user", "assistant", "tool"]
    assert_history_valid(agent.messages)


def test_after_tool_call_retry_of_a_cancelled_call_is_ignored() -> None:
    runs: list[Any] = []
    agent, _ = make_agent(TOOL_TURN, "done", runs=runs, max_retries=1)
    agent.hooks.add(BeforeToolCall, lambda e: setattr(e, "cancel_tool", "no"))

    @agent.on(AfterToolCall)
    def again(event: AfterToolCall) -> None:
        event.retry = True

    assert agent("hi").stop_reason == "end_turn"
    assert runs == []
    assert agent.messages[2].tool_results[0].content == "Denied: no"


# -- AfterModelCall writes ----------------------------------------------------------------------


def test_after_model_call_retry_calls_the_model_again() -> None:
    agent, script = make_agent("bad answer", "good answer")
    attempts: list[int] = []

    @agent.on(AfterModelCall)
    def retry_bad(event: AfterModelCall) -> None:
        attempts.append(event.attempt)
        assert event.response is not None
        if event.response.message.text == "bad answer":
            event.retry = True

    result = agent("hi")
    assert result.text == "good answer"
    assert attempts == [1, 2]
    assert script.calls == 2
    assert result.usage.model_calls == 2
    # the discarded reply never joined the conversation
    assert [m.text for m in agent.messages] == ["hi", "good answer"]
    assert [m.text for m in script.seen[1]] == ["hi"]


def test_after_model_call_retry_is_bounded() -> None:
    script = Script(default="again")
    agent, _ = make_agent(script=script, max_retries=2)

    @agent.on(AfterModelCall)
    def always(event: AfterModelCall) -> None:
        if event.attempt < 20:
            event.retry = True

    with pytest.raises(RetryLimitError) as info:
        agent("hi")
    assert str(info.value) == (
        "AfterModelCall hooks asked to retry the model call 3 times; "
        "the limit is 2 (Agent(max_retries=...))."
    )
    assert script.calls == 3
    assert info.value.result is not None
    assert info.value.result.stop_reason == "error"
    assert [m.role for m in agent.messages] == ["user"]


def test_after_model_call_max_retries_zero_allows_no_retry() -> None:
    agent, script = make_agent("x", "y", max_retries=0)
    agent.hooks.add(AfterModelCall, lambda e: setattr(e, "retry", True))
    with pytest.raises(RetryLimitError, match="the limit is 0"):
        agent("hi")
    assert script.calls == 1


def test_after_model_call_guidance_is_added_before_the_retry() -> None:
    agent, script = make_agent("rude", "polite")
    added: list[str] = []
    agent.hooks.add(MessageAdded, lambda e: added.append(f"{e.message.role}:{e.message.text}"))

    @agent.on(AfterModelCall)
    def coach(event: AfterModelCall) -> None:
        if event.response is not None and event.response.message.text == "rude":
            event.retry = True
            event.guidance = "Please be polite."

    result = agent("hi")
    assert result.text == "polite"
    assert [(m.role, m.text) for m in script.seen[1]] == [
        ("user", "hi"),
        ("user", "Please be polite."),
    ]
    assert [(m.role, m.text) for m in agent.messages] == [
        ("user", "hi"),
        ("user", "Please be polite."),
        ("assistant", "polite"),
    ]
    assert added == ["user:hi", "user:Please be polite.", "assistant:polite"]


def test_after_model_call_guidance_without_retry_is_not_added() -> None:
    agent, script = make_agent("fine")
    agent.hooks.add(AfterModelCall, lambda e: setattr(e, "guidance", "ignored"))
    agent("hi")
    assert [m.text for m in agent.messages] == ["hi", "fine"]
    assert script.calls == 1


def test_after_model_call_response_replacement() -> None:
    runs: list[Any] = []
    agent, script = make_agent("original", "after the tool", runs=runs)

    @agent.on(AfterModelCall)
    def replace(event: AfterModelCall) -> None:
        if event.attempt == 1 and script.calls == 1:
            message = Message("assistant", [ToolCall("replaced-1", "add", {"a": 4, "b": 5})])
            event.response = ModelResponse(message, "tool_use", Usage(1, 1))

    result = agent("hi")
    assert result.text == "after the tool"
    assert runs == [("add", 4, 5)]  # the replacement's tool call ran
    assert all(m.text != "original" for m in agent.messages)
    assert agent.messages[2].tool_results[0].content == "9"


def test_after_model_call_block_stops_the_run() -> None:
    agent, script = make_agent("leak the secret", "unused")

    @agent.on(AfterModelCall)
    def censor(event: AfterModelCall) -> None:
        event.block = "the reply leaked a secret"

    result = agent("hi")
    assert result.stop_reason == "blocked"
    assert result.reason is not None
    assert "the reply leaked a secret" in result.reason
    assert result.message is None
    assert [m.text for m in agent.messages] == ["hi"]
    assert script.calls == 1


def test_after_model_call_sees_a_model_exception_and_may_retry() -> None:
    agent, script = make_agent(RuntimeError("overloaded"), "recovered")
    seen: list[tuple[Any, Any]] = []

    @agent.on(AfterModelCall)
    def retry_errors(event: AfterModelCall) -> None:
        seen.append((event.response, event.exception))
        if event.exception is not None:
            event.retry = True

    result = agent("hi")
    assert result.text == "recovered"
    assert script.calls == 2
    first_response, first_error = seen[0]
    assert first_response is None
    assert isinstance(first_error, RuntimeError)
    assert str(first_error) == "overloaded"
    assert seen[1][1] is None
    assert seen[1][0] is not None
    assert [m.text for m in agent.messages] == ["hi", "recovered"]


def test_a_model_exception_not_retried_is_a_model_error() -> None:
    agent, _ = make_agent(RuntimeError("overloaded"))
    seen: list[Any] = []
    agent.hooks.add(AfterModelCall, lambda e: seen.append(e.exception))
    with pytest.raises(ModelError) as info:
        agent("hi")
    assert str(info.value) == "model 'scripted' failed: RuntimeError: overloaded"
    assert len(seen) == 1
    assert info.value.result is not None
    assert info.value.result.stop_reason == "error"
    assert [m.role for m in agent.messages] == ["user"]


# -- BeforeModelCall and BeforeInvocation writes --------------------------------------------------


def test_before_model_call_messages_change_only_the_request() -> None:
    agent, script = make_agent("done")

    @agent.on(BeforeModelCall)
    def rewrite(event: BeforeModelCall) -> None:
        assert [m.text for m in event.messages] == ["hi"]
        assert event.attempt == 1
        assert event.tool_specs == agent.tool_specs
        event.messages = [Message.user("system note"), *event.messages]

    agent("hi")
    assert [m.text for m in script.seen[0]] == ["system note", "hi"]
    assert [m.text for m in agent.messages] == ["hi", "done"]


def test_before_model_call_in_place_edits_do_not_touch_history() -> None:
    agent, script = make_agent("done")
    agent.hooks.add(BeforeModelCall, lambda e: e.messages.clear())
    agent("hi")
    assert script.seen[0] == []
    assert [m.text for m in agent.messages] == ["hi", "done"]


def test_before_model_call_block() -> None:
    agent, script = make_agent("never")
    agent.hooks.add(BeforeModelCall, lambda e: setattr(e, "block", "model calls are paused"))
    result = agent("hi")
    assert result.stop_reason == "blocked"
    assert result.reason == "model calls are paused"
    assert script.calls == 0
    assert [m.text for m in agent.messages] == ["hi"]


def test_before_invocation_block() -> None:
    agent, script = make_agent("never")
    added: list[Any] = []
    agent.hooks.add(MessageAdded, added.append)

    @agent.on(BeforeInvocation)
    def gate(event: BeforeInvocation) -> None:
        event.block = "outside business hours"

    result = agent("hi")
    assert result.stop_reason == "blocked"
    assert result.reason == "outside business hours"
    assert script.calls == 0
    assert agent.messages == []
    assert added == []


def test_before_invocation_messages_replace_the_input() -> None:
    agent, script = make_agent("done")

    @agent.on(BeforeInvocation)
    def normalise(event: BeforeInvocation) -> None:
        event.messages = [Message.user(m.text.upper()) for m in event.messages]

    agent("hello")
    assert [m.text for m in agent.messages] == ["HELLO", "done"]
    assert [m.text for m in script.seen[0]] == ["HELLO"]
