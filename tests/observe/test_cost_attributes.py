"""``tether.usage.cost``: each priced chat span's USD and the invocation's total; absent
when no price is known (never 0)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from tether import Agent, Limits, tool
from tether.models import ScriptedModel

USAGE = {"input_tokens": 4000, "output_tokens": 250, "cache_read_tokens": 1000}


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _turns() -> list[Any]:
    call = {"name": "add", "args": {"a": 1, "b": 2}}
    return [{"tool_calls": [call], "usage": USAGE}, {"text": "3", "usage": USAGE}]


def test_chat_and_invoke_agent_spans_carry_the_cost(otel: Any) -> None:
    model = ScriptedModel(_turns(), provider="openai", name="gpt-4o")
    agent = Agent(model=model, tools=[add], limits=Limits(cost=Decimal("2.50")))
    otel.instrument(agent, agent_name="calc")
    result = agent("1+2?")
    assert result.usage.cost is not None
    chats = otel.named("chat")
    calls = [m.usage.cost for m in agent.messages if m.role == "assistant" and m.usage]
    assert [s.attributes["tether.usage.cost"] for s in chats] == [float(c) for c in calls]
    root = otel.named("invoke_agent")[0]
    assert root.attributes["tether.usage.cost"] == float(result.usage.cost)
    assert root.attributes["tether.limits.cost"] == 2.5


def test_no_cost_attribute_without_a_price(otel: Any) -> None:
    agent = Agent(model=ScriptedModel(_turns()), tools=[add])
    otel.instrument(agent, agent_name="calc")
    agent("1+2?")
    assert all("tether.usage.cost" not in s.attributes for s in otel.spans())


def test_a_cost_limit_hit_is_named_on_the_span(otel: Any) -> None:
    model = ScriptedModel(_turns(), provider="openai", name="gpt-4o")
    agent = Agent(model=model, tools=[add], limits=Limits(cost=Decimal("0.01")))
    otel.instrument(agent, agent_name="calc")
    assert agent("1+2?").stop_reason == "cost_limit"
    root = otel.named("invoke_agent")[0]
    assert root.attributes["tether.limit.hit"] == "cost_limit"
