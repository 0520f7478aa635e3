"""Content capture: off, nothing a model, user or tool said reaches the exported data;
on, it does, redacted like the session views (secret-looking keys masked everywhere)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tether import Agent, tool
from tether.errors import ConfigurationError
from tether.models import ScriptedModel
from tether.observe import Tracing

PROMPT = "MARKER-PROMPT please log in"
SECRET = "hunter2-MARKER-SECRET"
SCRIPT: list[Any] = [
    {
        "text": "MARKER-MODEL-TEXT calling",
        "tool_calls": [{"name": "login", "args": {"user": "MARKER-ARG", "password": SECRET}}],
    },
    "MARKER-ANSWER done",
]


@tool
def login(user: str, password: str) -> str:
    """Log in."""
    return f"MARKER-RESULT welcome {user} (password {password})"


def exported(otel: Any) -> str:
    """Everything the exporter holds, as one text."""
    return "\n".join(span.to_json() for span in otel.spans())


def run(otel: Any, **options: Any) -> str:
    agent = Agent(model=ScriptedModel(SCRIPT), tools=[login], system_prompt="MARKER-SYSTEM")
    otel.instrument(agent, **options)
    agent(PROMPT)
    return exported(otel)


def test_content_capture_is_off_by_default(otel: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    text = run(otel)
    assert "MARKER" not in text
    assert "hunter2" not in text
    assert "execute_tool login" in text  # the spans are there, only the content is not


def test_content_capture_on_records_redacted_messages_arguments_and_results(otel: Any) -> None:
    text = run(otel, capture_content=True)
    assert "hunter2" not in text  # masked in the arguments and scrubbed from every other text
    for marker in (
        "MARKER-PROMPT",
        "MARKER-MODEL-TEXT",
        "MARKER-ARG",
        "MARKER-RESULT",
        "MARKER-SYSTEM",
        "MARKER-ANSWER",
    ):
        assert marker in text
    (tool_span,) = otel.named("execute_tool")
    arguments = json.loads(tool_span.attributes["gen_ai.tool.call.arguments"])
    assert arguments["user"] == "MARKER-ARG"
    assert arguments["password"] != SECRET
    assert "MARKER-RESULT" in tool_span.attributes["gen_ai.tool.call.result"]
    first_chat = otel.named("chat")[0]
    sent = json.loads(first_chat.attributes["gen_ai.input.messages"])
    assert sent == [{"role": "user", "parts": [{"type": "text", "content": PROMPT}]}]
    answered = json.loads(first_chat.attributes["gen_ai.output.messages"])
    assert answered[0]["parts"][1]["type"] == "tool_call"


def test_the_standard_environment_variable_turns_capture_on(
    otel: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    assert "MARKER-PROMPT" in run(otel)


def test_bad_options_are_refused_with_the_option_named() -> None:
    with pytest.raises(ConfigurationError, match=r"Tracing\(resume=\.\.\.\).*'sometimes'"):
        Tracing(resume="sometimes")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=r"capture_content.*'yes'"):
        Tracing(capture_content="yes")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=r"agent_name"):
        Tracing(agent_name="")
