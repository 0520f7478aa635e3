"""Per-call tool choice: a BeforeModelCall hook forces, forbids or picks a tool for one
call (``ModelRequest.tool_choice``), and each adapter sends it in its provider's form.

The wire format is read from what the project's fault server (tests/servers) received;
llm-katan (a third-party server) takes a forced choice and calls the named tool.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from tether import Agent, HookError, Limits, tool
from tether.control import BeforeModelCall
from tether.models import AnthropicModel, BedrockModel, OpenAIModel, RetryPolicy, ScriptedModel

FAST = RetryPolicy(max_attempts=2, base_delay=0.001, max_delay=0.005, stale_timeout=20)
_tags = itertools.count()


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def sub(a: int, b: int) -> int:
    """Subtract two numbers."""
    return a - b


def openai(url: str, plan: str, **kwargs: Any) -> OpenAIModel:
    return OpenAIModel(
        f"{plan}~choice-{next(_tags)}",
        api_key="sk-test",
        base_url=url + "/v1",
        retry=FAST,
        **kwargs,
    )


def claude(url: str, plan: str, **kwargs: Any) -> AnthropicModel:
    return AnthropicModel(
        f"{plan}~choice-{next(_tags)}",
        api_key="k",
        base_url=url,
        default_headers={"x-api-key": "k"},
        retry=FAST,
        **kwargs,
    )


def bedrock(url: str, plan: str, **kwargs: Any) -> BedrockModel:
    return BedrockModel(
        f"{plan}~choice-{next(_tags)}",
        region="us-east-1",
        endpoint_url=url,
        aws_access_key_id="k",
        aws_secret_access_key="s",
        retry=FAST,
        **kwargs,
    )


PROVIDERS = {
    "openai": openai,
    "openai-whole": lambda url, plan: openai(url, plan, streaming=False),
    "anthropic": claude,
    "bedrock": bedrock,
    "bedrock-whole": lambda url, plan: bedrock(url, plan, streaming=False),
}

# what each choice looks like on each wire
WIRE: dict[str, dict[str, Any]] = {
    "openai": {
        "auto": "auto",
        "required": "required",
        "none": "none",
        "sub": {"type": "function", "function": {"name": "sub"}},
    },
    "anthropic": {
        "auto": {"type": "auto"},
        "required": {"type": "any"},
        "none": {"type": "none"},
        "sub": {"type": "tool", "name": "sub"},
    },
    "bedrock": {
        "auto": {"auto": {}},
        "required": {"any": {}},
        "sub": {"tool": {"name": "sub"}},
    },
}


def choosing(model: Any, choice: str | None) -> Agent:
    agent = Agent(model=model, tools=[add, sub])

    @agent.on(BeforeModelCall)
    def pick(event: BeforeModelCall) -> None:
        event.tool_choice = choice

    return agent


def sent(fault: Any, model: Any) -> dict[str, Any]:
    [request] = fault.app.state.recorder.for_model(model.model)
    body: dict[str, Any] = request["body"]
    return body


@pytest.mark.parametrize("kind", list(PROVIDERS))
@pytest.mark.parametrize("choice", ["auto", "required", "none", "sub"])
def test_each_adapter_sends_the_hooks_choice_in_its_wire_format(
    fault: Any, kind: str, choice: str
) -> None:
    wire = WIRE[kind.split("-")[0]]
    model = PROVIDERS[kind](fault.url, "text")
    assert choosing(model, choice)("x").stop_reason == "end_turn"
    body = sent(fault, model)
    if kind.startswith("bedrock"):
        if choice == "none":  # Converse has no "none": the tools are not offered
            assert "toolConfig" not in body
        else:
            assert body["toolConfig"]["toolChoice"] == wire[choice]
            assert [t["toolSpec"]["name"] for t in body["toolConfig"]["tools"]] == ["add", "sub"]
    else:
        assert body["tool_choice"] == wire[choice]
        assert len(body["tools"]) == 2


@pytest.mark.parametrize("kind", ["openai", "anthropic", "bedrock"])
def test_without_a_choice_nothing_is_sent(fault: Any, kind: str) -> None:
    model = PROVIDERS[kind](fault.url, "text")
    Agent(model=model, tools=[add, sub])("x")
    body = sent(fault, model)
    assert "tool_choice" not in body
    assert "toolChoice" not in body.get("toolConfig", {})


def test_bedrock_refuses_none_once_the_conversation_holds_tool_calls(fault: Any) -> None:
    from tether.errors import ModelError

    model = bedrock(fault.url, "tools")  # the fault server's Converse tool call, then again
    agent = Agent(model=model, tools=[add, sub])
    calls = 0

    @agent.on(BeforeModelCall)
    def second_call_none(event: BeforeModelCall) -> None:
        nonlocal calls
        calls += 1
        if calls == 2:
            event.tool_choice = "none"

    with pytest.raises(ModelError, match="tool_choice='none'"):
        agent("x")
    assert len(fault.app.state.recorder.for_model(model.model)) == 1  # never sent
    assert agent.messages[-1].role == "tool"  # the history stays valid


def test_the_choice_is_for_one_call_and_scripted_models_see_it() -> None:
    model = ScriptedModel(
        [{"tool_calls": [{"name": "sub", "args": {"a": 3, "b": 1}}]}, "2"], record_requests=True
    )
    agent = Agent(model=model, tools=[add, sub])

    @agent.on(BeforeModelCall)
    def first_call_only(event: BeforeModelCall) -> None:
        if len(event.messages) == 1:
            event.tool_choice = "sub"

    assert agent("x").text == "2"
    assert [r.tool_choice for r in model.requests] == ["sub", None]


@pytest.mark.parametrize(
    ("bad", "shown"),
    [("any", "'any'"), ("rm", "'rm'"), (42, "'42'"), ("x" * 100, repr("x" * 60))],
)
def test_a_choice_no_provider_could_send_is_a_hook_error_before_the_call(
    bad: Any, shown: str
) -> None:
    model = ScriptedModel(["never"], record_requests=True)
    agent = choosing(model, bad)
    with pytest.raises(HookError) as raised:
        agent("x")
    assert str(raised.value) == (
        "BeforeModelCall.tool_choice must be 'auto', 'required', 'none' or the name of an "
        f"offered tool ('add', 'sub'), got {shown}"
    )
    assert model.requests == []  # the model was never called
    assert [m.role for m in agent.messages] == ["user"]


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_llm_katan_accepts_each_choice_in_its_wire_format(katan: Any, kind: str) -> None:
    """A third-party server parses the choices (it answers a tool request by calling a
    tool of its own choosing, so only the first call is checked)."""
    for choice in ("auto", "required", "none", "sub"):
        if kind == "openai":
            model: Any = OpenAIModel(
                "echo-model", api_key="llm-katan-openai-key", base_url=katan.url + "/v1", retry=FAST
            )
        else:
            model = AnthropicModel(
                "echo-model",
                api_key="llm-katan-anthropic-key",
                base_url=katan.url,
                default_headers={"x-api-key": "llm-katan-anthropic-key"},
                retry=FAST,
            )
        agent = choosing(model, choice)
        agent.limits = Limits(turns=1)
        result = agent("x")
        assert result.stop_reason in ("limit_turns", "end_turn"), (choice, result.reason)
        assert result.usage.model_calls == 1


@pytest.mark.parametrize("kind", ["anthropic", "bedrock"])
def test_a_hooks_choice_replaces_the_forced_final_answer_tool_for_that_call(
    fault: Any, kind: str
) -> None:
    from pydantic import BaseModel

    class Verdict(BaseModel):
        label: str
        score: int

    model = (
        claude(fault.url, "final_ok")
        if kind == "anthropic"
        else bedrock(fault.url, "final_ok", output_tool=True)
    )
    agent = choosing(model, "sub")
    # (the fault server answers through the final-answer tool whatever the choice)
    assert agent.run("x", output_type=Verdict).output == Verdict(label="spam", score=9)
    body = sent(fault, model)
    if kind == "anthropic":
        assert body["tool_choice"] == {"type": "tool", "name": "sub"}  # not {"type": "any"}
        assert [t["name"] for t in body["tools"]] == ["add", "sub", "final_answer"]
    else:
        assert body["toolConfig"]["toolChoice"] == {"tool": {"name": "sub"}}
