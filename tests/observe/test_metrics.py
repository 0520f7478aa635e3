"""Metrics read back through the SDK's in-memory metric reader."""

from __future__ import annotations

from typing import Any

from tether import Agent, ToolContext, tool
from tether.control import Deny, InterventionHandler
from tether.models import FallbackChain, ScriptedModel

from .test_spans import ADD, Down, Flaky, add


def by_attrs(points: list[Any], key: str) -> dict[Any, Any]:
    return {dict(p.attributes).get(key): p for p in points}


def test_token_usage_and_operation_duration_histograms_per_model_call(otel: Any) -> None:
    agent = Agent(model=ScriptedModel([ADD, "3"]), tools=[add])
    otel.instrument(agent)
    agent("add")
    tokens = by_attrs(otel.points("gen_ai.client.token.usage"), "gen_ai.token.type")
    assert set(tokens) == {"input", "output"}
    assert tokens["input"].count == 2
    assert tokens["input"].sum == agent.last_result.usage.input_tokens > 0
    assert tokens["output"].sum == agent.last_result.usage.output_tokens > 0
    assert dict(tokens["input"].attributes) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "tether",
        "gen_ai.request.model": "scripted",
        "gen_ai.token.type": "input",
    }
    assert list(tokens["input"].explicit_bounds) == [4**i for i in range(14)]  # the convention's
    (duration,) = otel.points("gen_ai.client.operation.duration")
    assert duration.count == 2
    assert list(duration.explicit_bounds)[:3] == [0.01, 0.02, 0.04]
    assert list(duration.explicit_bounds)[-1] == 81.92
    assert duration.sum > 0
    (tool_calls,) = otel.points("tether.tool.calls")
    assert dict(tool_calls.attributes) == {"gen_ai.tool.name": "add", "tether.tool.status": "ok"}
    assert tool_calls.value == 1


def test_counters_for_denied_calls_interrupts_retries_fallbacks_and_resumes(otel: Any) -> None:
    class NoSub(InterventionHandler):
        def before_tool_call(self, event: Any) -> Any:
            if event.tool_call.name == "sub":
                return Deny("no")
            return None

    @tool
    def sub(a: int, b: int) -> int:
        """Subtract."""
        return a - b

    @tool
    def ask(question: str, ctx: ToolContext) -> str:
        """Ask a human."""
        return str(ctx.interrupt("ask", question))

    calls = {"tool_calls": [{"name": "sub", "args": {"a": 1, "b": 2}}, ADD["tool_calls"][0]]}
    asking = {"tool_calls": [{"name": "ask", "args": {"question": "sure?"}}]}
    agent = Agent(
        model=FallbackChain([Down(), Flaky()]), tools=[add, sub, ask], interventions=[NoSub()]
    )
    agent.model.models[1].inner = ScriptedModel([calls, asking, "done"])
    otel.instrument(agent)
    result = agent("go")
    assert result.stop_reason == "interrupt"
    agent.resume({result.interrupts[0].id: "yes"})
    counted = {
        (p.attributes["gen_ai.tool.name"], p.attributes["tether.tool.status"]): p.value
        for p in otel.points("tether.tool.calls")
    }
    assert counted == {("sub", "denied"): 1, ("add", "ok"): 1, ("ask", "ok"): 1}
    (interrupts,) = otel.points("tether.interrupts")
    assert dict(interrupts.attributes) == {"tether.interrupt.source": "tool"}
    assert interrupts.value == 1
    retries = otel.points("tether.model.retries")
    assert [(dict(p.attributes), p.value) for p in retries] == [
        ({"tether.reason": "rate_limit"}, 3)
    ]
    fallbacks = otel.points("tether.model.fallbacks")
    assert [(dict(p.attributes), p.value) for p in fallbacks] == [
        ({"tether.reason": "overloaded"}, 2)
    ]
    (resumes,) = otel.points("tether.resumes")
    assert resumes.value == 1


async def test_the_approvals_pending_gauge_follows_the_store(otel: Any, tmp_path: Any) -> None:
    from tether.control import Confirm
    from tether.durable import SQLiteStore

    class AskFirst(InterventionHandler):
        def before_tool_call(self, event: Any) -> Confirm:
            return Confirm("add?")

    store = SQLiteStore(str(tmp_path / "g.db"))
    try:
        agent = Agent(
            model=ScriptedModel([ADD, "3"]),
            tools=[add],
            interventions=[AskFirst()],
            store=store,
            session_id="gauge",
        )
        otel.instrument(agent)
        assert otel.points("tether.approvals.pending") == []  # not read before a suspension
        result = await agent.invoke_async("add")
        assert result.stop_reason == "interrupt"
        (pending,) = otel.points("tether.approvals.pending")
        assert pending.value == 1
        (row,) = await store.approvals.pending(session_id="gauge")
        await store.approvals.decide(row.id, "approve", decided_by="alice")
        await agent.resume_async(await store.approvals.answers_for("gauge"))
        (pending,) = otel.points("tether.approvals.pending")
        assert pending.value == 0
    finally:
        await store.close()
