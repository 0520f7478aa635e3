"""What each hook event's writes and failures do in a real run (the loop's side of hooks)."""

from typing import Any

import pytest
from history import assert_history_valid, assert_run_fails
from hook_agents import TOOL_TURN, make_agent
from recording_script import Script

from tether import (
    Agent,
    Execution,
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
    AfterMessageAdded,
    AfterModelCall,
    AfterToolCall,
    BeforeInvocation,
    BeforeModelCall,
    BeforeToolCall,
)
from tether.messages import Usage
from tether.models import ModelResponse, ScriptedModel

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
        event.tool_call = event.tool_call

    agent.hooks.add(AfterToolCall, sneaky)
    assert_run_fails(
        agent,
        "hi",
        HookError,
        "raised ReadOnlyFieldError during AfterToolCall",
        "AfterToolCall.tool_call is read-only",
    )


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


# -- AfterMessageAdded


def test_message_added_sees_every_message_in_order() -> None:
    agent, _ = make_agent(TOOL_TURN, "3")
    seen: list[Message] = []
    agent.hooks.add(AfterMessageAdded, lambda e: seen.append(e.message))
    agent("hi")
    assert [m.role for m in seen] == ["user", "assistant", "tool", "assistant"]
    assert all(a is b for a, b in zip(seen, agent.messages, strict=True))
    assert seen[2].tool_results[0].content == "3"
    assert seen[3].text == "3"


# -- BeforeToolCall writes -------------------------------------------------------------------


def test_before_tool_call_rewriting_tool_call_changes_what_runs() -> None:
    runs: list[Any] = []
    agent, script = make_agent(TOOL_TURN, "done", runs=runs)

    @agent.on(BeforeToolCall)
    def rewrite(event: BeforeToolCall) -> None:
        call = event.tool_call
        event.tool_call = ToolCall(call.id, call.name, {"a": 10, "b": 20})

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
    agent, script = make_agent(TOOL_TURN, "done", runs=runs, execution=Execution(max_retries=2))

    @agent.on(AfterToolCall)
    def again(event: AfterToolCall) -> None:
        if len(runs) < 20:  # a broken bound fails the test instead of looping forever
            event.retry = True

    with pytest.raises(RetryLimitError) as info:
        agent("hi")
    call_id = agent.messages[1].tool_calls[0].id
    assert str(info.value) == (
        f"AfterToolCall hooks asked to retry tool 'add' (call {call_id}) 3 times; "
        "the limit is 2 (Execution(max_retries=...))."
    )
    assert len(runs) == 3  # the first run and two retries
    assert info.value.result is not None
    assert info.value.result.stop_reason == "error"
    assert script.calls == 1
    assert [m.role for m in agent.messages] == ["user", "assistant", "tool"]
    assert_history_valid(agent.messages)


def test_after_tool_call_retry_of_a_cancelled_call_is_ignored() -> None:
    runs: list[Any] = []
    agent, _ = make_agent(TOOL_TURN, "done", runs=runs, execution=Execution(max_retries=1))
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
    agent, _ = make_agent(script=script, execution=Execution(max_retries=2))

    @agent.on(AfterModelCall)
    def always(event: AfterModelCall) -> None:
        if event.attempt < 20:
            event.retry = True

    error = assert_run_fails(agent, "hi", RetryLimitError)
    assert str(error) == (
        "AfterModelCall hooks asked to retry the model call 3 times; "
        "the limit is 2 (Execution(max_retries=...))."
    )
    assert script.calls == 3
    assert [m.role for m in agent.messages] == ["user"]


def test_after_model_call_max_retries_zero_allows_no_retry() -> None:
    agent, script = make_agent("x", "y", execution=Execution(max_retries=0))
    agent.hooks.add(AfterModelCall, lambda e: setattr(e, "retry", True))
    with pytest.raises(RetryLimitError, match="the limit is 0"):
        agent("hi")
    assert script.calls == 1


def test_after_model_call_guidance_is_added_before_the_retry() -> None:
    agent, script = make_agent("rude", "polite")
    added: list[str] = []
    agent.hooks.add(AfterMessageAdded, lambda e: added.append(f"{e.message.role}:{e.message.text}"))

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
    agent.hooks.add(AfterMessageAdded, added.append)

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


def test_a_run_error_raised_in_a_hook_passes_through_unwrapped() -> None:
    from tether import PersistenceError

    agent = Agent(model=ScriptedModel(["x"]))

    def broken_journal(event: Any) -> None:
        raise PersistenceError("the disk is full")

    agent.hooks.add(AfterModelCall, broken_journal)
    with pytest.raises(PersistenceError, match="the disk is full") as info:
        agent("hi")
    assert not isinstance(info.value, HookError)
    assert info.value.result is not None
    assert info.value.result.stop_reason == "error"


def test_a_before_tool_call_block_stops_the_run_after_the_batch_and_later_groups_never_start() -> (
    None
):
    runs: list[Any] = []
    turn = {
        "tool_calls": [
            {"name": "add", "args": {"a": 1, "b": 2}},
            {"name": "sub", "args": {"a": 5, "b": 1}},
        ]
    }
    agent, script = make_agent(turn, "never", runs=runs)

    def stop_adding(event: BeforeToolCall) -> None:
        if event.tool_call.name == "add":
            event.block = "the policy engine is down"

    agent.hooks.add(BeforeToolCall, stop_adding)
    result = agent("hi")
    assert result.stop_reason == "blocked"
    assert result.reason == "the policy engine is down"
    assert runs == []  # add was blocked; sub (a later group) never started
    assert script.calls == 1
    assert_history_valid(agent.messages)
    add_result, sub_result = agent.messages[2].tool_results
    assert add_result.status == "denied"
    assert "the run stopped: the policy engine is down" in sub_result.content


def test_an_after_tool_call_block_withholds_the_result_and_stops() -> None:
    runs: list[Any] = []
    agent, script = make_agent(TOOL_TURN, "never", runs=runs)
    agent.hooks.add(AfterToolCall, lambda e: setattr(e, "block", "result leaked a secret"))
    result = agent("hi")
    assert result.stop_reason == "blocked"
    assert runs == [("add", 1, 2)]
    [shown] = agent.messages[2].tool_results
    assert shown.status == "denied"
    assert shown.content == "Denied: result leaked a secret"
    assert script.calls == 1
