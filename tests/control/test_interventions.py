"""Interventions: policy handlers returning Proceed / Deny / Guide / Confirm / Transform."""

import asyncio
from collections.abc import Callable
from typing import Any

import hook_agents
import pytest
from history import assert_run_fails
from hook_agents import TOOL_TURN
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
)
from tether.control import (
    AfterInvocation,
    AfterModelCall,
    AfterToolCall,
    BeforeInvocation,
    BeforeModelCall,
    BeforeToolCall,
    Confirm,
    ConfirmRequest,
    Deny,
    Guide,
    HookOrder,
    InterventionHandler,
    PolicyVerdict,
    Proceed,
    Transform,
)

POINTS = [
    "before_invocation",
    "before_model_call",
    "after_model_call",
    "before_tool_call",
    "after_tool_call",
]
EVENT_OF = {
    "before_invocation": BeforeInvocation,
    "before_model_call": BeforeModelCall,
    "after_model_call": AfterModelCall,
    "before_tool_call": BeforeToolCall,
    "after_tool_call": AfterToolCall,
}


def make_agent(*turns: Any, runs: list[Any] | None = None, **kwargs: Any) -> tuple[Agent, Script]:
    """The shared hook agent with the tools add and secret."""
    return hook_agents.make_agent(*turns, runs=runs, tools=("add", "secret"), **kwargs)


def policy(
    point: str,
    decide: Callable[[Any], Any],
    *,
    cls_name: str = "Policy",
    name: str = "",
    on_error: str = "throw",
) -> InterventionHandler:
    """A handler overriding only ``point``; ``decide(event)`` is its answer. ``.calls`` counts."""

    def method(self: Any, event: Any) -> Any:
        self.calls += 1
        return decide(event)

    attrs = {point: method, "name": name, "on_error": on_error, "calls": 0}
    return type(cls_name, (InterventionHandler,), attrs)()  # type: ignore[no-any-return]


def tool_result(agent: Agent) -> ToolResult:
    results = [r for m in agent.messages if m.role == "tool" for r in m.tool_results]
    assert len(results) == 1
    return results[0]


# -- registration --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "home"),
    [
        ("Action", "handler"),
        ("Confirm", "handler"),
        ("ConfirmCallback", "handler"),
        ("ConfirmRequest", "handler"),
        ("Deny", "handler"),
        ("Guide", "handler"),
        ("InterventionHandler", "handler"),
        ("OnError", "handler"),
        ("Point", "handler"),
        ("Proceed", "handler"),
        ("Transform", "handler"),
        ("InterventionRunner", "runner"),
        ("recheck_edit", "edit_check"),
    ],
)
def test_every_name_still_imports_from_tether_control_interventions(name: str, home: str) -> None:
    """interventions.py became a package split by concern; its names stay where they were."""
    import importlib

    import tether.control.interventions as interventions

    module = importlib.import_module(f"tether.control.interventions.{home}")
    assert getattr(interventions, name) is getattr(module, name)
    assert name in interventions.__all__


def test_handlers_register_only_the_points_they_override() -> None:
    class ToolsOnly(InterventionHandler):
        def before_tool_call(self, event: BeforeToolCall) -> None:
            return None

        def after_model_call(self, event: AfterModelCall) -> None:
            return None

    class Outputs(InterventionHandler):
        def after_tool_call(self, event: AfterToolCall) -> None:
            return None

    tools_only, outputs = ToolsOnly(), Outputs()
    agent, _ = make_agent("done", interventions=[tools_only, outputs])
    assert agent.hooks.has(BeforeToolCall)
    assert agent.hooks.has(AfterModelCall)
    assert agent.hooks.has(AfterToolCall)
    assert not agent.hooks.has(BeforeInvocation)
    assert not agent.hooks.has(BeforeModelCall)
    [before_tool] = agent.hooks.callbacks(BeforeToolCall)
    assert before_tool.handlers == [tools_only]  # type: ignore[attr-defined]
    [after_tool] = agent.hooks.callbacks(AfterToolCall)
    assert after_tool.handlers == [outputs]  # type: ignore[attr-defined]


def test_no_interventions_register_no_hooks() -> None:
    agent, _ = make_agent("done", interventions=[])
    for event_type in EVENT_OF.values():
        assert not agent.hooks.has(event_type)
    plain, _ = make_agent("done", interventions=[InterventionHandler()])
    for event_type in EVENT_OF.values():
        assert not plain.hooks.has(event_type)


@pytest.mark.parametrize("point", POINTS)
def test_one_overridden_point_registers_one_hook(point: str) -> None:
    agent, _ = make_agent("done", interventions=[policy(point, lambda e: None)])
    registered = {t for t in EVENT_OF.values() if agent.hooks.has(t)}
    assert registered == {EVENT_OF[point]}


def say_proceed(event: Any) -> Proceed:
    return Proceed()


def say_none(event: Any) -> None:
    return None


def test_proceed_and_none_change_nothing() -> None:
    runs: list[Any] = []
    handlers = [
        policy(point, decide, cls_name=f"{decide.__name__}_{point}")
        for decide in (say_proceed, say_none)
        for point in POINTS
    ]
    agent, script = make_agent(TOOL_TURN, "3", runs=runs, interventions=handlers)
    result = agent("hi")
    assert result.stop_reason == "end_turn"
    assert result.text == "3"
    assert runs == [("add", 1, 2)]
    assert [m.role for m in agent.messages] == ["user", "assistant", "tool", "assistant"]
    assert tool_result(agent).content == "3"
    assert [m.role for m in script.seen[0]] == ["user"]
    assert all(h.calls >= 1 for h in handlers)  # type: ignore[attr-defined]


def test_a_handler_class_name_is_the_default_label() -> None:
    class NoAdding(InterventionHandler):
        def before_tool_call(self, event: BeforeToolCall) -> Deny:
            return Deny("nope")

    assert NoAdding().label == "NoAdding"
    named = NoAdding()
    named.name = "finance-policy"
    assert named.label == "finance-policy"


# -- Deny --------------------------------------------------------------------------------------


def test_deny_before_tool_call() -> None:
    runs: list[Any] = []
    deny = policy("before_tool_call", lambda e: Deny("adding is forbidden"), name="no-add")
    agent, script = make_agent(TOOL_TURN, "ok", runs=runs, interventions=[deny])
    result = agent("hi")
    assert result.stop_reason == "end_turn"
    assert runs == []
    sent = script.seen[1][-1].tool_results[0]
    assert sent.content == "Denied: denied by policy 'no-add': adding is forbidden"
    assert sent.is_error is True
    assert sent.status == "denied"


@pytest.mark.parametrize(
    ("point", "history"),
    [
        ("before_invocation", []),
        ("before_model_call", ["user"]),
        ("after_model_call", ["user"]),
    ],
)
def test_deny_elsewhere_blocks_the_run(point: str, history: list[str]) -> None:
    deny = policy(point, lambda e: Deny("off limits"), cls_name="Gate")
    agent, script = make_agent("reply", interventions=[deny])
    result = agent("hi")
    assert result.stop_reason == "blocked"
    assert result.reason == "denied by policy 'Gate': off limits"
    assert result.message is None
    assert [m.role for m in agent.messages] == history
    assert script.calls == (1 if point == "after_model_call" else 0)


def test_deny_after_tool_call_hides_the_real_result() -> None:
    runs: list[Any] = []
    turn = {"tool_calls": [{"name": "secret", "args": {}}]}
    deny = policy("after_tool_call", lambda e: Deny("secrets stay inside"), cls_name="DLP")
    agent, script = make_agent(turn, "ok", runs=runs, interventions=[deny])
    agent("hi")
    assert runs == [("secret",)]  # the tool ran ...
    sent = script.seen[1][-1].tool_results[0]
    assert sent.content == "Denied: denied by policy 'DLP': secrets stay inside"
    assert sent.status == "denied"
    assert sent.is_error
    assert sent.tool_call_id == agent.messages[1].tool_calls[0].id
    # ... but its output reached neither the model nor the history
    assert all("42" not in repr(m) for m in script.seen[1])
    assert all("42" not in repr(m) for m in agent.messages)


def test_first_deny_short_circuits() -> None:
    before = policy("before_tool_call", lambda e: None, cls_name="Before")
    deny = policy("before_tool_call", lambda e: Deny("first"), cls_name="First")
    later_deny = policy("before_tool_call", lambda e: Deny("second"), cls_name="Second")
    later_guide = policy("before_tool_call", lambda e: Guide("x"), cls_name="Third")
    agent, _ = make_agent(TOOL_TURN, "ok", interventions=[before, deny, later_deny, later_guide])
    agent("hi")
    assert (before.calls, deny.calls, later_deny.calls, later_guide.calls) == (1, 1, 0, 0)  # type: ignore[attr-defined]
    assert tool_result(agent).content == "Denied: denied by policy 'First': first"


def test_deny_drops_earlier_guides() -> None:
    guide = policy("before_tool_call", lambda e: Guide("use another tool"), cls_name="Coach")
    deny = policy("before_tool_call", lambda e: Deny("forbidden"), cls_name="Wall")
    agent, _ = make_agent(TOOL_TURN, "ok", interventions=[guide, deny])
    agent("hi")
    assert tool_result(agent).content == "Denied: denied by policy 'Wall': forbidden"


# -- Guide -------------------------------------------------------------------------------------


def _guide_drafts(feedback: str, cls_name: str) -> InterventionHandler:
    def decide(event: AfterModelCall) -> Guide | None:
        assert event.response is not None
        return Guide(feedback) if event.response.message.text == "draft" else None

    return policy("after_model_call", decide, cls_name=cls_name)


def test_guides_from_two_handlers_become_one_message() -> None:
    style = _guide_drafts("be brief", "Style")
    tone = _guide_drafts("be kind", "Tone")
    agent, script = make_agent("draft", "final", interventions=[style, tone])
    result = agent("hi")
    assert result.text == "final"
    assert script.calls == 2
    expected = "Guidance from 2 policies:\n- Style: be brief\n- Tone: be kind"
    assert [(m.role, m.text) for m in script.seen[1]] == [("user", "hi"), ("user", expected)]
    # the guided reply was discarded; the guidance joined the history once
    assert [(m.role, m.text) for m in agent.messages] == [
        ("user", "hi"),
        ("user", expected),
        ("assistant", "final"),
    ]
    assert (style.calls, tone.calls) == (2, 2)  # type: ignore[attr-defined]


def test_a_single_guide_names_its_handler() -> None:
    agent, script = make_agent(
        "draft", "final", interventions=[_guide_drafts("cite sources", "Cite")]
    )
    agent("hi")
    assert script.seen[1][-1].text == "Guidance from policy 'Cite': cite sources"


def test_guide_retries_after_a_model_call_are_bounded() -> None:
    nag = policy("after_model_call", lambda e: Guide("again") if e.attempt < 20 else None)
    agent, script = make_agent(
        script=Script(default="reply"), interventions=[nag], execution=Execution(max_retries=1)
    )
    error = assert_run_fails(agent, "hi", RetryLimitError)
    assert str(error) == (
        "AfterModelCall hooks asked to retry the model call 2 times; "
        "the limit is 1 (Execution(max_retries=...))."
    )
    assert script.calls == 2
    assert [m.role for m in agent.messages] == ["user", "user"]


def test_guide_before_tool_call_replaces_the_run() -> None:
    runs: list[Any] = []
    coach = policy(
        "before_tool_call", lambda e: Guide("use the calculator skill"), cls_name="Coach"
    )
    agent, script = make_agent(TOOL_TURN, "ok", runs=runs, interventions=[coach])
    assert agent("hi").stop_reason == "end_turn"
    assert runs == []
    sent = script.seen[1][-1].tool_results[0]
    assert "Guidance from policy 'Coach': use the calculator skill" in sent.content
    assert "not run" in sent.content
    assert sent.is_error


def test_guide_after_tool_call_is_appended_to_the_result() -> None:
    coach = policy("after_tool_call", lambda e: Guide("double-check this"), cls_name="Review")
    agent, script = make_agent(TOOL_TURN, "ok", interventions=[coach])
    agent("hi")
    sent = script.seen[1][-1].tool_results[0]
    assert sent.content == "3\n\nGuidance from policy 'Review': double-check this"
    assert sent.status == "ok"
    assert not sent.is_error


def test_guide_before_invocation_adds_a_user_message() -> None:
    coach = policy("before_invocation", lambda e: Guide("answer in French"), cls_name="Lang")
    agent, script = make_agent("bonjour", interventions=[coach])
    agent("hi")
    expected = [("user", "hi"), ("user", "Guidance from policy 'Lang': answer in French")]
    assert [(m.role, m.text) for m in script.seen[0]] == expected
    assert [(m.role, m.text) for m in agent.messages[:2]] == expected


def test_guide_before_model_call_changes_only_the_request() -> None:
    coach = policy("before_model_call", lambda e: Guide("be brief"), cls_name="Brief")
    agent, script = make_agent("ok", interventions=[coach])
    agent("hi")
    assert [m.text for m in script.seen[0]] == ["hi", "Guidance from policy 'Brief': be brief"]
    assert [m.text for m in agent.messages] == ["hi", "ok"]


# -- Confirm -------------------------------------------------------------------------------------


def _ask_before_tools() -> InterventionHandler:
    return policy("before_tool_call", lambda e: Confirm("Run add?"), cls_name="Gate")


@pytest.mark.parametrize("answer", [True, False])
def test_confirm_with_a_sync_callback(answer: bool) -> None:
    runs: list[Any] = []
    requests: list[ConfirmRequest] = []

    def approve(request: ConfirmRequest) -> bool:
        requests.append(request)
        return answer

    agent, _ = make_agent(
        TOOL_TURN, "ok", runs=runs, interventions=[_ask_before_tools()], confirm=approve
    )
    agent("hi")
    [request] = requests
    assert request.prompt == "Run add?"
    assert request.handler == "Gate"
    assert request.point == "before_tool_call"
    assert request.agent is agent
    assert request.tool_call == ToolCall(
        agent.messages[1].tool_calls[0].id, "add", {"a": 1, "b": 2}
    )
    if answer:
        assert runs == [("add", 1, 2)]
        assert tool_result(agent).content == "3"
    else:
        assert runs == []
        result = tool_result(agent)
        assert result.status == "denied"
        assert result.content == "Denied: not confirmed (Gate: Run add?): the approver said no"


@pytest.mark.parametrize("answer", [True, False])
def test_confirm_with_an_async_callback(answer: bool) -> None:
    runs: list[Any] = []
    requests: list[ConfirmRequest] = []

    async def approve(request: ConfirmRequest) -> bool:
        await asyncio.sleep(0)
        requests.append(request)
        return answer

    agent, _ = make_agent(
        TOOL_TURN, "ok", runs=runs, interventions=[_ask_before_tools()], confirm=approve
    )
    agent("hi")
    assert len(requests) == 1
    assert runs == ([("add", 1, 2)] if answer else [])
    assert tool_result(agent).status == ("ok" if answer else "denied")


def test_confirm_without_a_callback_suspends_for_a_human() -> None:
    runs: list[Any] = []
    agent, _ = make_agent(TOOL_TURN, "ok", runs=runs, interventions=[_ask_before_tools()])
    result = agent("hi")
    assert runs == []
    assert result.stop_reason == "interrupt"
    [pending] = result.interrupts
    assert pending.name == "confirm:Gate"
    assert pending.reason == "Run add?"
    assert pending.source == "intervention"
    assert pending.tool_call is not None
    assert pending.tool_call.name == "add"
    resumed = agent.resume({pending.id: "deny"})
    assert resumed.stop_reason == "end_turn"
    assert runs == []
    denied = tool_result(agent)
    assert denied.status == "denied"
    assert denied.content.startswith("Denied: not confirmed (Gate: Run add?)")


def test_refused_confirm_elsewhere_blocks_and_has_no_tool_call() -> None:
    requests: list[ConfirmRequest] = []

    def refuse(request: ConfirmRequest) -> bool:
        requests.append(request)
        return False

    gate = policy("before_model_call", lambda e: Confirm("Spend tokens?"), cls_name="Budget")
    agent, script = make_agent("never", interventions=[gate], confirm=refuse)
    result = agent("hi")
    assert result.stop_reason == "blocked"
    assert result.reason == "not confirmed (Budget: Spend tokens?): the approver said no"
    assert script.calls == 0
    assert requests[0].point == "before_model_call"
    assert requests[0].tool_call is None


def test_refused_confirm_short_circuits_and_approved_continues() -> None:
    asked = policy("before_tool_call", lambda e: Confirm("ok?"), cls_name="Ask")
    after = policy("before_tool_call", lambda e: None, cls_name="After")
    agent, _ = make_agent(TOOL_TURN, "ok", interventions=[asked, after], confirm=lambda r: False)
    agent("hi")
    assert after.calls == 0  # type: ignore[attr-defined]
    asked2 = policy("before_tool_call", lambda e: Confirm("ok?"), cls_name="Ask")
    after2 = policy("before_tool_call", lambda e: None, cls_name="After")
    agent2, _ = make_agent(TOOL_TURN, "ok", interventions=[asked2, after2], confirm=lambda r: True)
    agent2("hi")
    assert after2.calls == 1  # type: ignore[attr-defined]


# -- Transform ----------------------------------------------------------------------------------


def test_transform_before_invocation_messages() -> None:
    upper = policy(
        "before_invocation",
        lambda e: Transform(lambda ms: [Message.user(m.text.upper()) for m in ms]),
    )
    agent, script = make_agent("ok", interventions=[upper])
    agent("quiet")
    assert [m.text for m in agent.messages] == ["QUIET", "ok"]
    assert [m.text for m in script.seen[0]] == ["QUIET"]


def test_transform_before_model_call_messages() -> None:
    note = policy(
        "before_model_call", lambda e: Transform(lambda ms: [Message.user("policy note"), *ms])
    )
    agent, script = make_agent("ok", interventions=[note])
    agent("hi")
    assert [m.text for m in script.seen[0]] == ["policy note", "hi"]
    assert [m.text for m in agent.messages] == ["hi", "ok"]


def test_transform_after_model_call_message() -> None:
    redact = policy(
        "after_model_call",
        lambda e: Transform(lambda m: Message.assistant(m.text.replace("1234", "****"))),
    )
    agent, _ = make_agent("card 1234", interventions=[redact])
    result = agent("hi")
    assert result.text == "card ****"
    assert agent.messages[-1].text == "card ****"
    assert result.stop_reason == "end_turn"


def test_transform_before_tool_call_arguments() -> None:
    runs: list[Any] = []
    clamp = policy(
        "before_tool_call",
        lambda e: Transform(lambda c: ToolCall(c.id, c.name, {"a": 5, "b": 5})),
    )
    agent, _ = make_agent(TOOL_TURN, "ok", runs=runs, interventions=[clamp])
    agent("hi")
    assert runs == [("add", 5, 5)]
    assert tool_result(agent).content == "10"


def test_transform_after_tool_call_result() -> None:
    mask = policy(
        "after_tool_call",
        lambda e: Transform(lambda r: ToolResult(r.tool_call_id, r.name, "*" * len(r.content))),
    )
    turn = {"tool_calls": [{"name": "secret", "args": {}}]}
    agent, script = make_agent(turn, "ok", interventions=[mask])
    agent("hi")
    assert script.seen[1][-1].tool_results[0].content == "*" * len("the-secret-is-42")


def test_a_transform_applies_at_once_so_later_handlers_see_it() -> None:
    seen: list[dict[str, Any]] = []
    first = policy(
        "before_tool_call",
        lambda e: Transform(lambda c: ToolCall(c.id, c.name, {"a": 7, "b": 7})),
        cls_name="First",
    )
    second = policy(
        "before_tool_call", lambda e: seen.append(dict(e.tool_call.arguments)), cls_name="Second"
    )
    agent, _ = make_agent(TOOL_TURN, "ok", interventions=[first, second])
    agent("hi")
    assert seen == [{"a": 7, "b": 7}]


@pytest.mark.parametrize(
    ("point", "expected"),
    [
        ("before_invocation", "list"),
        ("before_model_call", "list"),
        ("after_model_call", "Message"),
        ("before_tool_call", "ToolCall"),
        ("after_tool_call", "ToolResult"),
    ],
)
def test_a_transform_returning_the_wrong_type_is_a_hook_error(point: str, expected: str) -> None:
    bad = policy(point, lambda e: Transform(lambda subject: "oops"), cls_name="Sloppy")
    agent, _ = make_agent(TOOL_TURN, "ok", interventions=[bad])
    with pytest.raises(HookError) as info:
        agent("hi")
    assert str(info.value) == (
        f"intervention 'Sloppy': Transform at {point} returned str, expected {expected}"
    )
    assert info.value.result is not None
    assert info.value.result.stop_reason == "error"
    messages = agent.messages
    for index, message in enumerate(messages):
        if message.tool_calls:
            assert messages[index + 1].role == "tool"


def test_an_unknown_action_is_a_hook_error() -> None:
    bad = policy("before_tool_call", lambda e: "yes", cls_name="Chatty")
    agent, _ = make_agent(TOOL_TURN, "ok", interventions=[bad])
    with pytest.raises(HookError) as info:
        agent("hi")
    assert str(info.value) == (
        "intervention 'Chatty' returned 'yes' at before_tool_call; expected "
        "Proceed, Deny, Guide, Confirm, Transform or None"
    )


# -- on_error ------------------------------------------------------------------------------------


def _boom(event: Any) -> Any:
    raise ValueError("policy store unreachable")


def test_on_error_throw_is_the_default() -> None:
    runs: list[Any] = []
    buggy = policy("before_tool_call", _boom, cls_name="Buggy")
    assert buggy.on_error == "throw"
    agent, script = make_agent(TOOL_TURN, "ok", runs=runs, interventions=[buggy])
    with pytest.raises(HookError) as info:
        agent("hi")
    assert str(info.value) == (
        "intervention 'Buggy' raised ValueError at before_tool_call: policy store unreachable"
    )
    assert isinstance(info.value.__cause__, ValueError)
    assert info.value.result is not None
    assert info.value.result.stop_reason == "error"
    assert runs == []
    assert script.calls == 1
    assert [m.role for m in agent.messages] == ["user", "assistant", "tool"]
    assert tool_result(agent).is_error


def test_on_error_deny_fails_closed_at_a_tool_call() -> None:
    runs: list[Any] = []
    buggy = policy("before_tool_call", _boom, cls_name="Strict", on_error="deny")
    later = policy("before_tool_call", lambda e: None, cls_name="Later")
    agent, _ = make_agent(TOOL_TURN, "ok", runs=runs, interventions=[buggy, later])
    result = agent("hi")
    assert result.stop_reason == "end_turn"
    assert runs == []
    assert later.calls == 0  # type: ignore[attr-defined]
    denied = tool_result(agent)
    assert denied.status == "denied"
    assert denied.content == (
        "Denied: denied by policy 'Strict': the policy failed "
        "(ValueError: policy store unreachable) and fails closed"
    )


def test_on_error_deny_blocks_the_run_elsewhere() -> None:
    buggy = policy("before_invocation", _boom, cls_name="Strict", on_error="deny")
    agent, script = make_agent("never", interventions=[buggy])
    result = agent("hi")
    assert result.stop_reason == "blocked"
    assert result.reason is not None
    assert "Strict" in result.reason
    assert "policy store unreachable" in result.reason
    assert script.calls == 0


def test_on_error_proceed_ignores_the_failure() -> None:
    runs: list[Any] = []
    buggy = policy("before_tool_call", _boom, cls_name="Lenient", on_error="proceed")
    later = policy("before_tool_call", lambda e: None, cls_name="Later")
    agent, _ = make_agent(TOOL_TURN, "3", runs=runs, interventions=[buggy, later])
    result = agent("hi")
    assert result.stop_reason == "end_turn"
    assert runs == [("add", 1, 2)]
    assert later.calls == 1  # type: ignore[attr-defined]
    assert tool_result(agent).content == "3"


@pytest.mark.parametrize("decide", [_boom, lambda e: Transform(lambda subject: 1 / 0)])
async def test_a_policy_that_fails_open_leaves_a_warning_and_a_policy_failed_verdict(
    decide: Callable[[Any], Any], tmp_path: Any, caplog: pytest.LogCaptureFixture
) -> None:
    from tether.durable import SQLiteStore

    runs: list[Any] = []
    lenient = policy("before_tool_call", decide, cls_name="Lenient", on_error="proceed")
    store = SQLiteStore(str(tmp_path / "audit.db"))
    seen: list[PolicyVerdict] = []
    try:
        agent, _ = make_agent(
            TOOL_TURN, "3", runs=runs, interventions=[lenient], store=store, session_id="open"
        )
        agent.hooks.add(PolicyVerdict, seen.append)
        with caplog.at_level("WARNING", logger="tether"):
            result = await agent.invoke_async("hi")
        records = await store.audit.records(session_id="open")
    finally:
        await store.close()
    assert result.stop_reason == "end_turn"
    assert runs == [("add", 1, 2)]  # it failed open: the tool ran
    (warning,) = [r for r in caplog.records if "fails open" in r.getMessage()]
    assert warning.levelname == "WARNING"
    assert "'Lenient'" in warning.getMessage()
    assert "before_tool_call" in warning.getMessage()
    error = "ValueError" if decide is _boom else "ZeroDivisionError"
    assert error in warning.getMessage()
    (verdict,) = [v for v in seen if v.action == "policy.failed"]  # after a Transform's own
    assert (verdict.action, verdict.policy, verdict.error) == ("policy.failed", "Lenient", error)
    failed = [r.data for r in records if r.data.get("action") == "policy.failed"]
    assert failed == [
        {
            "point": "before_tool_call",
            "policy": "Lenient",
            "action": "policy.failed",
            "tool": "add",
            "call_id": failed[0]["call_id"],
            "error": error,
        }
    ]
    assert "unreachable" not in str(failed)  # the type only: an error's text may hold secrets


def test_two_confirms_of_one_name_at_one_point_are_refused_not_answered_as_one() -> None:
    runs: list[Any] = []
    ask = policy("before_tool_call", lambda e: Confirm("ok?"), cls_name="Ask", name="security")
    again = policy("before_tool_call", lambda e: Confirm("ok?"), cls_name="Ask", name="security")
    agent, _ = make_agent(TOOL_TURN, "3", runs=runs, interventions=[ask, again])
    with pytest.raises(HookError) as raised:
        agent("hi")
    assert str(raised.value) == (
        "two interventions named 'security' both asked for confirmation at before_tool_call: "
        "one answer would answer both; give each its own name (InterventionHandler.name)"
    )
    assert runs == []
    assert agent.pending_interrupts == []


def _crashing_transform(event: Any) -> Transform:
    return Transform(lambda subject: 1 / 0)


@pytest.mark.parametrize("on_error", ["throw", "deny", "proceed"])
def test_a_failing_transform_follows_on_error(on_error: str) -> None:
    runs: list[Any] = []
    handler = policy(
        "before_tool_call", _crashing_transform, cls_name="Redactor", on_error=on_error
    )
    agent, _ = make_agent(TOOL_TURN, "3", runs=runs, interventions=[handler])
    if on_error == "throw":
        with pytest.raises(HookError) as info:
            agent("hi")
        assert str(info.value) == (
            "intervention 'Redactor' raised ZeroDivisionError at before_tool_call: division by zero"
        )
        assert runs == []
    elif on_error == "deny":
        assert agent("hi").stop_reason == "end_turn"
        assert runs == []
        assert tool_result(agent).content == (
            "Denied: denied by policy 'Redactor': the policy failed "
            "(ZeroDivisionError: division by zero) and fails closed"
        )
    else:
        assert agent("hi").stop_reason == "end_turn"
        assert runs == [("add", 1, 2)]
        assert tool_result(agent).content == "3"
    assert [m.role for m in agent.messages][:3] == ["user", "assistant", "tool"]


def test_a_failing_transform_with_deny_blocks_elsewhere() -> None:
    handler = policy("after_model_call", _crashing_transform, cls_name="Filter", on_error="deny")
    agent, _ = make_agent("raw reply", interventions=[handler])
    result = agent("hi")
    assert result.stop_reason == "blocked"
    assert result.reason is not None
    assert result.reason.startswith("denied by policy 'Filter': the policy failed")
    assert [m.role for m in agent.messages] == ["user"]


def test_invalid_on_error_is_rejected_at_construction() -> None:
    bad = policy("before_tool_call", lambda e: None, cls_name="Odd", on_error="ignore")
    with pytest.raises(ValueError, match="on_error must be") as info:
        make_agent("ok", interventions=[bad])
    assert str(info.value) == (
        "intervention 'Odd': on_error must be 'throw', 'deny' or 'proceed', got 'ignore'"
    )


@pytest.mark.parametrize(
    "bad",
    [object(), "policy", InterventionHandler, lambda event: Deny("x")],
    ids=["object", "str", "class", "function"],
)
def test_non_handlers_are_rejected_at_construction(bad: Any) -> None:
    with pytest.raises(TypeError) as info:
        make_agent("ok", interventions=[bad])
    assert (
        str(info.value) == f"interventions=[...] takes InterventionHandler instances, got {bad!r}"
    )


# -- async handlers and ordering --------------------------------------------------------------------


def test_async_handler_methods() -> None:
    runs: list[Any] = []

    class AsyncPolicy(InterventionHandler):
        async def before_tool_call(self, event: BeforeToolCall) -> Deny:
            await asyncio.sleep(0)
            return Deny(f"no {event.tool_call.name}")

        async def after_model_call(self, event: AfterModelCall) -> Transform | None:
            await asyncio.sleep(0)
            assert event.response is not None
            if event.response.tool_calls:
                return None
            return Transform(lambda m: Message.assistant(m.text + "!"))

    agent, _ = make_agent(TOOL_TURN, "done", runs=runs, interventions=[AsyncPolicy()])
    result = agent("hi")
    assert runs == []
    assert tool_result(agent).content == "Denied: denied by policy 'AsyncPolicy': no add"
    assert result.text == "done!"


def test_async_handler_failure_follows_on_error() -> None:
    class Flaky(InterventionHandler):
        on_error = "deny"

        async def before_tool_call(self, event: BeforeToolCall) -> None:
            await asyncio.sleep(0)
            raise TimeoutError("slow policy")

    runs: list[Any] = []
    agent, _ = make_agent(TOOL_TURN, "ok", runs=runs, interventions=[Flaky()])
    agent("hi")
    assert runs == []
    assert "(TimeoutError: slow policy)" in tool_result(agent).content


def test_before_interventions_run_after_default_hooks() -> None:
    seen: list[dict[str, Any]] = []
    order: list[str] = []

    def record(event: BeforeToolCall) -> None:
        order.append("intervention")
        seen.append(dict(event.tool_call.arguments))

    agent, _ = make_agent(TOOL_TURN, "ok", interventions=[policy("before_tool_call", record)])

    @agent.on(BeforeToolCall)
    def rewrite(event: BeforeToolCall) -> None:
        order.append("default")
        call = event.tool_call
        event.tool_call = ToolCall(call.id, call.name, {"a": 40, "b": 2})

    agent.hooks.add(BeforeToolCall, lambda e: order.append("sdk_last"), HookOrder.SDK_LAST)
    agent("hi")
    assert order == ["default", "intervention", "sdk_last"]
    assert seen == [{"a": 40, "b": 2}]
    assert tool_result(agent).content == "42"


def test_after_interventions_run_before_default_hooks() -> None:
    order: list[str] = []

    def mask_result(event: AfterToolCall) -> Transform:
        order.append("intervention")
        return Transform(lambda r: ToolResult(r.tool_call_id, r.name, "masked"))

    mask = policy("after_tool_call", mask_result)
    agent, _ = make_agent(TOOL_TURN, "ok", interventions=[mask])
    seen: list[str] = []

    @agent.on(AfterToolCall)
    def audit(event: AfterToolCall) -> None:
        order.append("default")
        seen.append(event.result.content)

    agent.hooks.add(AfterToolCall, lambda e: order.append("sdk_first"), HookOrder.SDK_FIRST)
    agent("hi")
    assert order == ["sdk_first", "intervention", "default"]
    assert seen == ["masked"]


def test_after_model_call_handlers_skip_failed_model_calls() -> None:
    judge = policy("after_model_call", lambda e: Deny("never reached"))
    agent, _ = make_agent(RuntimeError("provider down"), interventions=[judge])
    with pytest.raises(ModelError, match="RuntimeError: provider down"):
        agent("hi")
    assert judge.calls == 0  # type: ignore[attr-defined]


def test_after_invocation_still_runs_when_a_policy_blocks() -> None:
    finished: list[str] = []
    agent, _ = make_agent("x", interventions=[policy("before_invocation", lambda e: Deny("no"))])
    agent.hooks.add(AfterInvocation, lambda e: finished.append(e.result.stop_reason))
    agent("hi")
    assert finished == ["blocked"]
