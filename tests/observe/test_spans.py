"""The span tree, attributes and events of real runs, read from the SDK's in-memory exporter."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import pytest
from opentelemetry.trace import SpanKind, StatusCode

from tether import Agent, Limits, tool
from tether.control import Confirm, Deny, InterventionHandler
from tether.events import ModelRetry, ModelStreamEvent
from tether.models import FallbackChain, ScriptedModel
from tether.models.base import ModelRequest
from tether.models.failover import FailoverReason, ProviderError

ADD = {"tool_calls": [{"name": "add", "args": {"a": 1, "b": 2}}]}


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def by_id(spans: list[Any]) -> dict[int, Any]:
    return {s.context.span_id: s for s in spans}


def events(span: Any, name: str) -> list[dict[str, Any]]:
    return [dict(e.attributes) for e in span.events if e.name == name]


def test_a_plain_run_is_one_invoke_agent_span_with_chat_and_tool_children(otel: Any) -> None:
    agent = Agent(model=ScriptedModel([ADD, "3"]), tools=[add], limits=Limits(turns=5))
    otel.instrument(agent, agent_name="calc")
    result = agent("what is 1+2?")
    assert result.text == "3"

    spans = otel.spans()
    assert [s.name for s in spans] == [
        "chat scripted",
        "execute_tool add",
        "chat scripted",
        "invoke_agent calc",
    ]
    root = spans[-1]
    assert root.parent is None
    assert root.kind is SpanKind.INTERNAL
    assert all(s.parent.span_id == root.context.span_id for s in spans[:-1])
    assert all(s.context.trace_id == root.context.trace_id for s in spans)
    attrs = dict(root.attributes)
    assert attrs["gen_ai.operation.name"] == "invoke_agent"
    assert attrs["gen_ai.agent.name"] == "calc"
    assert attrs["gen_ai.conversation.id"] == agent.session_id
    assert attrs["gen_ai.request.model"] == "scripted"
    assert attrs["gen_ai.provider.name"] == "tether"
    assert attrs["tether.stop_reason"] == "end_turn"
    assert attrs["tether.limits.turns"] == 5
    assert attrs["tether.usage.model_calls"] == 2
    assert attrs["tether.usage.tool_calls"] == 1
    assert attrs["tether.resumed"] is False
    chat = dict(spans[0].attributes)
    assert spans[0].kind is SpanKind.CLIENT
    assert chat["gen_ai.operation.name"] == "chat"
    assert chat["gen_ai.response.model"] == "scripted"
    assert chat["gen_ai.response.finish_reasons"] == ("tool_use",)
    assert dict(spans[2].attributes)["gen_ai.response.finish_reasons"] == ("end_turn",)
    tool_attrs = dict(spans[1].attributes)
    assert tool_attrs["gen_ai.operation.name"] == "execute_tool"
    assert tool_attrs["gen_ai.tool.name"] == "add"
    assert tool_attrs["gen_ai.tool.call.id"] == agent.messages[1].tool_calls[0].id
    assert tool_attrs["tether.tool.status"] == "ok"
    assert spans[1].status.status_code is StatusCode.UNSET


class Flaky:
    """A provider model whose first attempt fails and is retried (as ResilientModel does)."""

    name = "flaky-1"
    provider = "openai"

    def __init__(self) -> None:
        self.inner = ScriptedModel(["recovered"])

    async def stream(self, request: ModelRequest) -> AsyncGenerator[ModelStreamEvent, None]:
        yield ModelRetry(1, "rate_limit", 0.0, self.name, "429 Too Many Requests")
        async for event in self.inner.stream(request):
            yield event


class Down:
    name = "down-1"
    provider = "anthropic"

    async def stream(self, request: ModelRequest) -> AsyncGenerator[ModelStreamEvent, None]:
        raise ProviderError(FailoverReason.OVERLOADED, self.name, "529 overloaded")
        yield  # pragma: no cover


def test_retries_and_fallbacks_are_separate_chat_spans_with_the_reason(otel: Any) -> None:
    agent = Agent(model=FallbackChain([Down(), Flaky()]))
    otel.instrument(agent)
    result = agent("hi")
    assert result.text == "recovered"
    chats = otel.named("chat ")
    assert [c.name for c in chats] == ["chat down-1", "chat flaky-1", "chat flaky-1"]
    down, first, second = (dict(c.attributes) for c in chats)
    assert down["error.type"] == "overloaded"
    assert down["gen_ai.provider.name"] == "anthropic"
    assert chats[0].status.status_code is StatusCode.ERROR
    assert events(chats[0], "tether.model.fallback") == [
        {
            "tether.reason": "overloaded",
            "tether.fallback.from": "down-1",
            "tether.fallback.to": "flaky-1",
        }
    ]
    assert first["gen_ai.provider.name"] == second["gen_ai.provider.name"] == "openai"
    assert first["error.type"] == "rate_limit"
    assert events(chats[1], "tether.model.retry")[0]["tether.reason"] == "rate_limit"
    assert "error.type" not in second
    assert second["tether.provider_attempt"] == 2
    assert second["gen_ai.response.model"] == "flaky-1"
    assert chats[2].status.status_code is StatusCode.UNSET
    root = dict(otel.named("invoke_agent")[0].attributes)
    assert root["tether.usage.model_retries"] == 1
    assert root["tether.usage.model_fallbacks"] == 1


class NoAdd(InterventionHandler):
    name = "no-add"

    def before_tool_call(self, event: Any) -> Deny | None:
        return Deny("adding is off today")


def test_a_denied_call_is_a_span_with_error_status_and_the_policy_reason(otel: Any) -> None:
    agent = Agent(model=ScriptedModel([ADD, "ok"]), tools=[add], interventions=[NoAdd()])
    otel.instrument(agent)
    agent("add")
    (span,) = otel.named("execute_tool")
    attrs = dict(span.attributes)
    assert attrs["tether.tool.status"] == "denied"
    assert attrs["error.type"] == "denied"
    assert span.status.status_code is StatusCode.ERROR
    assert "no-add" in span.status.description
    assert "adding is off today" in span.status.description
    (deny,) = events(span, "tether.tool.deny")
    assert deny["tether.reason"] == "denied by policy 'no-add': adding is off today"
    points = otel.points("tether.policy.decisions")
    assert [(dict(p.attributes), p.value) for p in points] == [
        ({"tether.decision": "deny", "tether.point": "before_tool_call"}, 1)
    ]


class AskFirst(InterventionHandler):
    name = "ask-first"

    def before_tool_call(self, event: Any) -> Confirm:
        return Confirm("add them?")


def test_a_confirm_answered_in_process_runs_the_tool_in_one_trace(otel: Any) -> None:
    asked: list[str] = []

    def confirm(request: Any) -> bool:
        asked.append(request.handler)
        return True

    agent = Agent(
        model=ScriptedModel([ADD, "3"]), tools=[add], interventions=[AskFirst()], confirm=confirm
    )
    otel.instrument(agent)
    agent("add")
    assert asked == ["ask-first"]
    (span,) = otel.named("execute_tool")
    assert dict(span.attributes)["tether.tool.status"] == "ok"
    assert len({s.context.trace_id for s in otel.spans()}) == 1
    assert events(span, "tether.confirm.answered") == [
        {"tether.policy": "ask-first", "tether.approved": True}
    ]


def test_a_confirm_refused_in_process_is_a_denied_span_that_says_so(otel: Any) -> None:
    agent = Agent(
        model=ScriptedModel([ADD, "fine"]),
        tools=[add],
        interventions=[AskFirst()],
        confirm=lambda request: False,
    )
    otel.instrument(agent)
    agent("add")
    (span,) = otel.named("execute_tool")
    assert events(span, "tether.confirm.answered") == [
        {"tether.policy": "ask-first", "tether.approved": False}
    ]
    assert span.attributes["tether.tool.status"] == "denied"
    (deny,) = events(span, "tether.tool.deny")
    assert deny["tether.reason"].startswith("not confirmed (ask-first: add them?)")


def test_an_interrupt_closes_the_tool_span_and_is_an_event_on_both_spans(otel: Any) -> None:
    agent = Agent(model=ScriptedModel([ADD, "3"]), tools=[add], interventions=[AskFirst()])
    otel.instrument(agent)
    result = agent("add")
    assert result.stop_reason == "interrupt"
    (tool_span,) = otel.named("execute_tool")
    (root,) = otel.named("invoke_agent")
    assert dict(tool_span.attributes)["tether.tool.status"] == "interrupted"
    raised = events(root, "tether.interrupt.raised")
    assert raised == events(tool_span, "tether.interrupt.raised")
    assert raised[0]["tether.interrupt.name"] == "confirm:ask-first"
    assert raised[0]["tether.interrupt.source"] == "intervention"
    assert raised[0]["gen_ai.tool.name"] == "add"
    agent.resume({result.interrupts[0].id: "approve"})
    roots = otel.named("invoke_agent")
    assert len(roots) == 2
    resumed = roots[1]
    assert resumed.parent.span_id == root.context.span_id
    assert resumed.context.trace_id == root.context.trace_id
    assert dict(resumed.attributes)["tether.resumed"] is True
    (answered,) = events(resumed, "tether.interrupt.answered")
    assert answered == {
        "tether.interrupt.id": result.interrupts[0].id,
        "tether.interrupt.source": "intervention",
        "tether.answer": "approve",
    }


def test_link_mode_starts_a_new_trace_linked_to_the_suspended_one(otel: Any) -> None:
    agent = Agent(model=ScriptedModel([ADD, "3"]), tools=[add], interventions=[AskFirst()])
    otel.instrument(agent, resume="link")
    result = agent("add")
    agent.resume({result.interrupts[0].id: True})
    first, resumed = otel.named("invoke_agent")
    assert resumed.parent is None
    assert resumed.context.trace_id != first.context.trace_id
    (link,) = resumed.links
    assert link.context.span_id == first.context.span_id
    assert link.context.trace_id == first.context.trace_id


def test_a_cancelled_run_ends_every_span_with_stop_reason_cancelled(otel: Any) -> None:
    holder: list[Agent] = []

    @tool
    def stop() -> str:
        """Cancel the run."""
        holder[0].cancel()
        return "stopping"

    agent = Agent(
        model=ScriptedModel([{"tool_calls": [{"name": "stop", "args": {}}]}, "never"]),
        tools=[stop],
    )
    holder.append(agent)
    otel.instrument(agent)
    assert agent("go").stop_reason == "cancelled"
    names = [s.name for s in otel.spans()]
    assert names == ["chat scripted", "execute_tool stop", "invoke_agent tether"]
    root = otel.spans()[-1]
    assert dict(root.attributes)["tether.stop_reason"] == "cancelled"
    assert root.status.status_code is StatusCode.UNSET


def test_a_failed_run_is_an_error_span_without_the_error_text(otel: Any) -> None:
    class Broken:
        name = "broken"

        async def stream(self, request: ModelRequest) -> AsyncGenerator[ModelStreamEvent, None]:
            raise ValueError("the user's secret prompt text")
            yield  # pragma: no cover

    agent = Agent(model=Broken())
    otel.instrument(agent)
    with pytest.raises(Exception, match="secret prompt"):
        agent("hi")
    chat, root = otel.spans()
    assert chat.status.status_code is StatusCode.ERROR
    assert dict(chat.attributes)["error.type"] == "ValueError"
    assert root.status.status_code is StatusCode.ERROR
    assert dict(root.attributes)["tether.stop_reason"] == "error"
    assert "secret prompt" not in repr([s.to_json() for s in otel.spans()])


def test_agent_hooks_verdicts_are_events_on_the_span_they_judged(otel: Any) -> None:
    pytest.importorskip("agent_hooks")

    def no_tools(ctx: dict[str, Any]) -> dict[str, Any]:
        if ctx["interception_point"] == "pre_tool_call":
            return {"decision": "deny", "reason": "p:no-tools"}
        return {"decision": "allow"}

    agent = Agent(model=ScriptedModel([ADD, "fine"]), tools=[add], agent_hooks=[no_tools])
    otel.instrument(agent)
    agent("add")
    (span,) = otel.named("execute_tool")
    (verdict,) = events(span, "tether.agent_hooks.verdict")
    assert verdict["tether.agent_hooks.point"] == "pre_tool_call"
    assert verdict["tether.agent_hooks.decision"] == "deny"
    assert verdict["tether.agent_hooks.reason"] == "p:no-tools"
    assert verdict["tether.agent_hooks.decided_by"] == 0
    assert verdict["tether.agent_hooks.proceeds"] is False
    assert verdict["tether.agent_hooks.input_identity"].startswith("sha256:")
    assert dict(span.attributes)["tether.tool.status"] == "denied"
    (root,) = otel.named("invoke_agent")
    points = {e["tether.agent_hooks.point"] for e in events(root, "tether.agent_hooks.verdict")}
    assert {"input", "output", "agent_startup"} <= points


def test_tethers_log_records_carry_the_session_and_trace_ids_during_a_traced_run(
    otel: Any, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    @tool
    def noisy() -> str:
        """Log through tether's audit logger, as the audit trail does when a store is down."""
        logging.getLogger("tether.audit").warning("store unavailable")
        return "ok"

    agent = Agent(
        model=ScriptedModel([{"tool_calls": [{"name": "noisy", "args": {}}]}, "done"]),
        tools=[noisy],
    )
    otel.instrument(agent)
    with caplog.at_level(logging.WARNING, logger="tether.audit"):
        agent("go")
        logging.getLogger("tether.audit").warning("after the run")
    during, after = caplog.records
    (root,) = otel.named("invoke_agent")
    assert during.tether_session_id == agent.session_id
    assert during.otelTraceID == format(root.context.trace_id, "032x")
    assert during.otelSpanID == format(root.context.span_id, "016x")
    assert not hasattr(after, "otelTraceID")


async def test_a_stream_its_caller_abandons_is_ended_by_the_next_invocation(otel: Any) -> None:
    agent = Agent(model=ScriptedModel([ADD, "3", "again"]), tools=[add])
    otel.instrument(agent)
    stream = agent.stream("add")
    async for _ in stream:
        break  # the caller stops reading: no AfterInvocation
    await stream.aclose()
    assert otel.named("invoke_agent") == []
    await agent.invoke_async("more")
    first, second = otel.named("invoke_agent")
    assert first.attributes["tether.abandoned"] is True
    assert first.attributes["tether.stop_reason"] == "cancelled"
    assert first.end_time <= second.start_time
    assert second.attributes["tether.stop_reason"] == "end_turn"


def test_a_hook_requested_retry_and_a_guide_are_visible(otel: Any) -> None:
    from tether.control import AfterModelCall, Guide

    class Careful(InterventionHandler):
        name = "careful"

        def before_tool_call(self, event: Any) -> Guide:
            return Guide("use sub instead")

    agent = Agent(model=ScriptedModel(["draft", ADD, "3"]), tools=[add], interventions=[Careful()])
    seen: list[int] = []

    @agent.on(AfterModelCall)
    def once(event: AfterModelCall) -> None:
        seen.append(event.attempt)
        if event.attempt == 1 and len(seen) == 1:
            event.retry = True

    otel.instrument(agent)
    agent("go")
    chats = otel.named("chat")
    assert [c.attributes["tether.attempt"] for c in chats[:2]] == [1, 2]
    assert events(chats[0], "tether.model_call.retry_requested") == [{"tether.guidance": False}]
    (tool_span,) = otel.named("execute_tool")
    (guide,) = events(tool_span, "tether.tool.guide")
    assert guide["tether.reason"] == "not run. Guidance from policy 'careful': use sub instead"
    assert tool_span.attributes["tether.tool.status"] == "denied"


def test_intervention_verdicts_name_the_handler_on_the_span_they_judged(otel: Any) -> None:
    from tether.control import Transform

    class Halve(InterventionHandler):
        name = "halve"

        def before_tool_call(self, event: Any) -> Transform:
            def halve(call: Any) -> Any:
                return type(call)(call.id, call.name, {"a": 0, "b": 1})

            return Transform(halve)

    asked: list[str] = []
    agent = Agent(
        model=ScriptedModel([ADD, "1"]),
        tools=[add],
        interventions=[AskFirst(), Halve()],
        confirm=lambda request: asked.append(request.prompt) or True,
    )
    otel.instrument(agent)
    agent("add")
    assert asked == ["add them?"]
    (tool_span,) = otel.named("execute_tool")
    assert events(tool_span, "tether.policy.verdict") == [
        {
            "tether.policy": "ask-first",
            "tether.action": "Confirm",
            "tether.point": "before_tool_call",
        },
        {
            "tether.policy": "halve",
            "tether.action": "Transform",
            "tether.point": "before_tool_call",
        },
    ]
    assert events(tool_span, "tether.tool.rewritten") == [{}]
    counted = {
        (p.attributes["tether.policy"], p.attributes["tether.action"]): p.value
        for p in otel.points("tether.interventions")
    }
    assert counted == {("ask-first", "Confirm"): 1, ("halve", "Transform"): 1}


def test_a_policy_that_fails_open_is_a_policy_failed_verdict_on_the_span(otel: Any) -> None:
    class Flaky(InterventionHandler):
        name = "flaky"
        on_error = "proceed"

        def before_tool_call(self, event: Any) -> None:
            raise KeyError("token=abc")

    agent = Agent(model=ScriptedModel([ADD, "3"]), tools=[add], interventions=[Flaky()])
    otel.instrument(agent)
    assert agent("add").text == "3"  # failed open: the tool ran
    (tool_span,) = otel.named("execute_tool")
    assert events(tool_span, "tether.policy.verdict") == [
        {
            "tether.policy": "flaky",
            "tether.action": "policy.failed",
            "tether.point": "before_tool_call",
            "error.type": "KeyError",
        }
    ]


async def test_with_a_store_the_audit_trail_still_records_every_verdict(
    otel: Any, tmp_path: Any
) -> None:
    from tether.durable import SQLiteStore

    store = SQLiteStore(str(tmp_path / "a.db"))
    try:
        agent = Agent(
            model=ScriptedModel([ADD, "ok"]),
            tools=[add],
            interventions=[NoAdd()],
            store=store,
            session_id="audited",
        )
        otel.instrument(agent)
        await agent.invoke_async("add")
        records = await store.audit.records(session_id="audited")
    finally:
        await store.close()
    verdicts = [r.data for r in records if r.event == "policy.verdict"]
    assert [(v["policy"], v["action"]) for v in verdicts] == [("no-add", "Deny")]
    (tool_span,) = otel.named("execute_tool")
    (event,) = events(tool_span, "tether.policy.verdict")
    assert event["tether.policy"] == "no-add"


def test_an_mcp_tool_call_is_an_execute_tool_span_like_any_tool(otel: Any) -> None:
    """MCP tools are ordinary tools: the fixture server's echo over stdio, a real process."""
    import sys
    from pathlib import Path

    pytest.importorskip("mcp")
    from tether.mcp import MCPServer

    fixture = str(Path(__file__).parents[1] / "support" / "mcp_fixture_server.py")
    turn = {"tool_calls": [{"name": "echo", "args": {"text": "hi"}}]}
    with MCPServer.stdio(sys.executable, [fixture, "stdio"]) as server:
        agent = Agent(model=ScriptedModel([turn, "done"]), tools=[server])
        otel.instrument(agent)
        agent("echo")
    (span,) = otel.named("execute_tool")
    assert span.name == "execute_tool echo"
    assert span.attributes["tether.tool.status"] == "ok"
    assert span.parent.span_id == otel.named("invoke_agent")[0].context.span_id


def test_the_name_is_the_invoke_agent_span_and_gen_ai_agent_name(otel: Any) -> None:
    agent = Agent(model=ScriptedModel(["hi"]))
    agent.name = "researcher"
    otel.instrument(agent)
    agent("go")
    (span,) = otel.named("invoke_agent")
    assert span.name == "invoke_agent researcher"  # not "invoke_agent tether"
    assert span.attributes["gen_ai.agent.name"] == "researcher"


def test_an_unnamed_agent_keeps_the_tracing_name(otel: Any) -> None:
    agent = Agent(model=ScriptedModel(["hi"]))
    otel.instrument(agent, agent_name="calc")
    agent("go")
    (span,) = otel.named("invoke_agent")
    assert span.name == "invoke_agent calc"
