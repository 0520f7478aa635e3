"""structured.py: output_type validated into Result.output, with bounded retries."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from pydantic import BaseModel

from tether import Agent, ConfigurationError, RunError
from tether.control import BeforeOutput
from tether.errors import OutputValidationError
from tether.models import ScriptedModel


class Verdict(BaseModel):
    label: str
    score: int


@dataclass
class Point:
    x: int
    y: int


def test_a_valid_answer_becomes_result_output_and_before_output_sees_it() -> None:
    seen: list[Any] = []
    agent = Agent(model=ScriptedModel(['{"label": "spam", "score": 9}']))
    agent.on(BeforeOutput)(lambda event: seen.append(event.output))
    result = agent.run("classify", output_type=Verdict)
    assert result.output == Verdict(label="spam", score=9)
    assert seen == [Verdict(label="spam", score=9)]
    # the model was told the schema
    assert '"score"' in agent.messages[1].text
    assert "JSON" in agent.messages[1].text


def test_a_dataclass_in_a_code_fence_is_accepted() -> None:
    agent = Agent(model=ScriptedModel(['```json\n{"x": 1, "y": 2}\n```']))
    assert agent.run("where", output_type=Point).output == Point(1, 2)


def test_an_invalid_answer_goes_back_to_the_model_with_the_error() -> None:
    agent = Agent(model=ScriptedModel(['{"label": "spam"}', '{"label": "spam", "score": 3}']))
    result = agent.run("classify", output_type=Verdict)
    assert result.output == Verdict(label="spam", score=3)
    feedback = agent.messages[-2]
    assert feedback.role == "user"
    assert "score: Field required" in feedback.text


def test_past_the_retry_bound_the_run_fails_naming_the_fields() -> None:
    agent = Agent(model=ScriptedModel(["no json", '{"label": 1}', '{"score": "x"}']))
    with pytest.raises(OutputValidationError) as info:
        agent.run("classify", output_type=Verdict)
    message = str(info.value)
    assert "does not fit Verdict" in message
    assert "label" in message
    assert "score" in message
    assert "after 2 retries" in message
    assert isinstance(info.value, RunError)
    assert info.value.result is not None
    assert info.value.result.stop_reason == "error"
    assert len(agent.messages) == 7  # nothing lost: prompt, instruction, 3 answers, 2 feedbacks


def test_an_output_type_pydantic_cannot_use_is_refused_before_the_run() -> None:
    agent = Agent(model=ScriptedModel(["x"]))
    with pytest.raises(ConfigurationError, match="cannot be validated from JSON"):
        agent.run("x", output_type=object())
    assert agent.messages == []


def test_without_output_type_result_output_is_none() -> None:
    agent = Agent(model=ScriptedModel(["plain"]))
    assert agent.run("x").output is None


def test_the_model_request_carries_the_schema_for_native_structured_output() -> None:
    from collections.abc import AsyncGenerator

    from tether.events import ModelStop, TextDelta
    from tether.models.base import ModelRequest

    seen: list[tuple[Any, str]] = []

    class Capturing:
        name = "capturing"

        async def stream(self, request: ModelRequest) -> AsyncGenerator[Any, None]:
            seen.append((request.output_schema, request.output_name))
            yield TextDelta('{"x": 1, "y": 2}')
            yield ModelStop("end_turn")

    agent = Agent(model=Capturing())
    assert agent.run("where", output_type=Point).output == Point(1, 2)
    assert seen[0][1] == "Point"
    assert seen[0][0]["required"] == ["x", "y"]
    agent.run("plain")
    assert seen[1] == (None, "output")


def test_a_json_answer_cut_across_two_parts_is_validated_whole() -> None:
    from tether.context.truncated import CONTINUE_PROMPT

    model = ScriptedModel(
        [
            {"text": '{"label": "sp', "stop_reason": "max_tokens"},
            'am", "score": 9}',
        ]
    )
    agent = Agent(model=model, store=None)
    result = agent.run("classify", output_type=Verdict)
    assert result.output == Verdict(label="spam", score=9)
    assert result.text == '{"label": "spam", "score": 9}'
    assert result.usage.continuations == 1
    assert model.remaining == 0  # no retry: the stitched answer was valid
    prompts = [m.text for m in agent.messages if m.role == "user"]
    assert prompts[2:] == [CONTINUE_PROMPT]  # no "not valid" feedback about the first part


def test_an_invalid_stitched_answer_gets_feedback_and_the_retry_starts_afresh() -> None:
    model = ScriptedModel(
        [
            {"text": '{"label": ', "stop_reason": "max_tokens"},
            '"spam"}',  # whole: {"label": "spam"}, score missing
            '{"label": "spam", "score": 3}',
        ]
    )
    agent = Agent(model=model, store=None)
    result = agent.run("classify", output_type=Verdict)
    assert result.output == Verdict(label="spam", score=3)
    assert result.text == '{"label": "spam", "score": 3}'  # not stitched to the failed parts
    feedback = agent.messages[-2]
    assert "score: Field required" in feedback.text
    assert "Invalid JSON" not in feedback.text  # the whole answer was checked, not a part
