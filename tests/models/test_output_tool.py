"""Native structured output for Anthropic and Bedrock: a forced final-answer tool.

The request offers ``final_answer`` (input schema: the output type's JSON schema) and
forces it; its input becomes the answer the loop validates. Against llm-katan (a
third-party server speaking both wire formats; it calls the first offered tool with
arguments made from its schema) and the project's fault server (tests/servers: a
scripted bad answer then a good one, prose beside the call, streamed and whole).
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from pydantic import BaseModel, Field

from tether import Agent, IterationBudget, tool
from tether.errors import OutputValidationError
from tether.models import AnthropicModel, BedrockModel, RetryPolicy
from tether.models.base import ModelRequest
from tether.models.output_tool import OutputTool

FAST = RetryPolicy(max_attempts=2, base_delay=0.001, max_delay=0.005, stale_timeout=20)
_tags = itertools.count()


class Verdict(BaseModel):
    label: str
    score: int


class Strict(BaseModel):
    label: str
    score: int = Field(ge=5)  # llm-katan's made-up 1 never fits


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def claude(url: str, plan: str = "katan", **kwargs: Any) -> AnthropicModel:
    return AnthropicModel(
        "echo-model" if plan == "katan" else f"{plan}~output-tool-{next(_tags)}",
        api_key="llm-katan-anthropic-key",
        base_url=url,
        default_headers={"x-api-key": "llm-katan-anthropic-key"},
        retry=FAST,
        **kwargs,
    )


def bedrock(url: str, plan: str = "katan", **kwargs: Any) -> BedrockModel:
    kwargs.setdefault("output_tool", True)  # (the fault server's model ids are plans)
    return BedrockModel(
        "anthropic.claude-echo-v1:0" if plan == "katan" else f"{plan}~output-tool-{next(_tags)}",
        region="us-east-1",
        endpoint_url=url,
        aws_access_key_id="llm-katan-bedrock-key",
        aws_secret_access_key="x",
        retry=FAST,
        **kwargs,
    )


PROVIDERS = {
    "anthropic": lambda url, plan="katan", **kw: claude(url, plan, **kw),
    "anthropic-whole": lambda url, plan="katan", **kw: claude(url, plan, streaming=False, **kw),
    "bedrock": lambda url, plan="katan", **kw: bedrock(url, plan, **kw),
    "bedrock-whole": lambda url, plan="katan", **kw: bedrock(url, plan, streaming=False, **kw),
}
KATAN = ["anthropic", "anthropic-whole", "bedrock-whole"]  # its ConverseStream is unframed


def offered(body: dict[str, Any]) -> tuple[list[str], Any]:
    """(tool names, tool choice) of a recorded request, either wire format."""
    if "toolConfig" in body:
        config = body["toolConfig"]
        return [t["toolSpec"]["name"] for t in config["tools"]], config.get("toolChoice")
    return [t["name"] for t in body.get("tools", [])], body.get("tool_choice")


def schema_of(body: dict[str, Any], name: str) -> dict[str, Any]:
    if "toolConfig" in body:
        [spec] = [
            t["toolSpec"] for t in body["toolConfig"]["tools"] if t["toolSpec"]["name"] == name
        ]
        schema: dict[str, Any] = spec["inputSchema"]["json"]
        return schema
    [found] = [t for t in body["tools"] if t["name"] == name]
    return found["input_schema"]  # type: ignore[no-any-return]


def forced(kind: str, name: str = "final_answer") -> Any:
    if kind.startswith("bedrock"):
        return {"tool": {"name": name}}
    return {"type": "tool", "name": name}


@pytest.mark.parametrize("kind", KATAN)
def test_llm_katan_answers_through_the_forced_tool(katan: Any, kind: str) -> None:
    """llm-katan calls the (only) offered tool, final_answer, with arguments from its
    schema; that input is the structured output."""
    agent = Agent(model=PROVIDERS[kind](katan.url))
    result = agent.run("classify this", output_type=Verdict)
    assert result.output == Verdict(label="test_label", score=1)
    assert json.loads(result.text) == {"label": "test_label", "score": 1}  # no echoed prose
    assert result.stop_reason == "end_turn"


@pytest.mark.parametrize("kind", KATAN)
def test_llm_katan_invalid_answers_are_retried_then_fail_naming_the_field(
    katan: Any, kind: str
) -> None:
    agent = Agent(model=PROVIDERS[kind](katan.url))
    with pytest.raises(
        OutputValidationError,
        match=r"score: Input should be greater than or equal to 5.*after 2 retries",
    ):
        agent.run("classify this", output_type=Strict)
    # the first answer and both retries are in the history, each with the feedback
    feedback = [m.text for m in agent.messages if m.role == "user" and "not valid" in m.text]
    assert len(feedback) == 2


@pytest.mark.parametrize("kind", list(PROVIDERS))
def test_a_bad_answer_goes_back_to_the_model_and_the_next_one_is_the_output(
    fault: Any, kind: str
) -> None:
    model = PROVIDERS[kind](fault.url, "final_bad,final_ok")
    agent = Agent(model=model)
    result = agent.run("classify this", output_type=Verdict)
    assert result.output == Verdict(label="spam", score=9)
    first, second = fault.app.state.recorder.for_model(model.model)
    for request in (first, second):  # both calls force the final-answer tool
        names, choice = offered(request["body"])
        assert names == ["final_answer"]
        assert choice == forced(kind)
        assert schema_of(request["body"], "final_answer") == Verdict.model_json_schema()
    sent = json.dumps(second["body"])
    assert "score: Input should be a valid integer" in sent  # the validation error, to the model
    assert result.usage.model_calls == 2


@pytest.mark.parametrize("kind", list(PROVIDERS))
def test_retries_are_bounded_and_the_error_names_the_field(fault: Any, kind: str) -> None:
    model = PROVIDERS[kind](fault.url, "final_bad")
    with pytest.raises(
        OutputValidationError, match=r"does not fit Verdict: score: .*after 2 retries"
    ):
        Agent(model=model).run("classify this", output_type=Verdict)
    assert len(fault.app.state.recorder.for_model(model.model)) == 3  # 1 + 2 retries


@pytest.mark.parametrize("kind", ["anthropic", "bedrock"])
def test_prose_beside_the_final_call_is_dropped(fault: Any, kind: str) -> None:
    result = Agent(model=PROVIDERS[kind](fault.url, "final_text")).run("x", output_type=Verdict)
    assert result.output == Verdict(label="ham", score=2)
    assert json.loads(result.text) == {"label": "ham", "score": 2}


@pytest.mark.parametrize("kind", ["anthropic", "bedrock"])
def test_beside_other_tools_the_model_must_call_a_tool_and_names_never_collide(
    fault: Any, kind: str
) -> None:
    @tool(name="final_answer")
    def taken(x: str) -> str:
        """A tool of the agent's that happens to use the name."""
        return x

    model = PROVIDERS[kind](fault.url, "final_ok")
    agent = Agent(model=model, tools=[add, taken], budget=IterationBudget(3))
    result = agent.run("x", output_type=Verdict)
    assert result.output == Verdict(label="spam", score=9)
    [request] = fault.app.state.recorder.for_model(model.model)
    names, choice = offered(request["body"])
    assert names == ["add", "final_answer", "final_answer_"]
    assert choice == ({"any": {}} if kind == "bedrock" else {"type": "any"})


@pytest.mark.parametrize("kind", ["anthropic", "bedrock"])
def test_output_tool_false_keeps_the_schema_in_the_prompt_only(fault: Any, kind: str) -> None:
    model = PROVIDERS[kind](fault.url, "text", output_tool=False)
    with pytest.raises(OutputValidationError):
        Agent(model=model).run("x", output_type=Verdict)  # "Hello" is not a Verdict
    first = fault.app.state.recorder.for_model(model.model)[0]["body"]
    assert offered(first) == ([], None)
    assert "matching this JSON schema of Verdict" in json.dumps(first)


def test_bedrock_forces_the_tool_only_for_models_that_take_a_forced_choice() -> None:
    def output_tool(model_id: str) -> bool:
        model = BedrockModel(
            model_id, region="us-east-1", aws_access_key_id="k", aws_secret_access_key="s"
        )
        return model.output_tool

    assert output_tool("anthropic.claude-3-5-sonnet-20240620-v1:0")
    assert output_tool("us.anthropic.claude-sonnet-4-20250514-v1:0")
    assert output_tool("amazon.nova-pro-v1:0")
    assert not output_tool("meta.llama3-70b-instruct-v1:0")


def test_anthropic_with_thinking_lets_the_model_choose(fault: Any) -> None:
    model = claude(fault.url, "final_ok", params={"thinking": {"type": "enabled"}})
    assert Agent(model=model).run("x", output_type=Verdict).output == Verdict(label="spam", score=9)
    [request] = fault.app.state.recorder.for_model(model.model)
    assert request["body"]["tool_choice"] == {"type": "auto"}  # thinking refuses a forced one


def test_a_non_object_output_is_wrapped_and_unwrapped() -> None:
    from pydantic import TypeAdapter

    request = ModelRequest([], [], output_schema=TypeAdapter(list[Verdict]).json_schema())
    output = OutputTool.of(request)
    assert output is not None
    assert output.input_schema["type"] == "object"
    assert output.input_schema["required"] == ["value"]
    assert output.input_schema["properties"]["value"]["items"] == {"$ref": "#/$defs/Verdict"}
    assert "Verdict" in output.input_schema["$defs"]
    assert output.answer({"value": [{"label": "a", "score": 1}]}) == '[{"label": "a", "score": 1}]'
    assert output.answer('{"value": [1, 2]}') == "[1, 2]"
    assert OutputTool.of(ModelRequest([], [])) is None
