"""Every text a span carries goes through the one redaction path, content capture on or
off: a denied call's reason (a policy's text, an approver's note), a failing tool's error."""

from __future__ import annotations

from typing import Any

import pytest

from tether import Agent, tool
from tether.control import BeforeToolCall, Confirm, Deny, InterventionHandler
from tether.models import ScriptedModel


def exported(otel: Any) -> str:
    return "\n".join(span.to_json() for span in otel.spans())


class RefuseRevoked(InterventionHandler):
    def before_tool_call(self, event: BeforeToolCall) -> Deny | None:
        key = event.tool_call.arguments.get("api_key")
        return Deny(f"api_key {key} is revoked; Bearer abcdef123456 too")


@tool
def fetch(url: str, api_key: str) -> str:
    """Fetch."""
    return "never"


@tool
def connect(host: str, password: str) -> str:
    """Connect."""
    raise RuntimeError(f"auth failed for {host} with password {password}")


def one_call(name: str, args: dict[str, Any], **options: Any) -> Agent:
    script: list[Any] = [{"tool_calls": [{"name": name, "args": args}]}, "done"]
    return Agent(model=ScriptedModel(script), **options)


@pytest.mark.parametrize("capture", [True, False])
def test_a_deny_reason_quoting_a_secret_is_redacted_in_status_and_event(
    otel: Any, capture: bool
) -> None:
    agent = one_call(
        "fetch",
        {"url": "u", "api_key": "sk-live-REVOKED-77"},
        tools=[fetch],
        interventions=[RefuseRevoked()],
    )
    otel.instrument(agent, capture_content=capture)
    agent("go")
    (span,) = otel.named("execute_tool")
    (deny,) = [e for e in span.events if e.name == "tether.tool.deny"]
    for text in (span.status.description, deny.attributes["tether.reason"]):
        assert "REVOKED" not in text
        assert "abcdef123456" not in text
        assert "api_key *** is revoked; Bearer *** too" in text
    assert "REVOKED" not in exported(otel)


def test_a_failing_tools_error_text_in_the_span_status_is_redacted(otel: Any) -> None:
    agent = one_call("connect", {"host": "db1", "password": "pw-RAW-ERROR-99"}, tools=[connect])
    otel.instrument(agent, capture_content=True)
    agent("go")
    (span,) = otel.named("execute_tool")
    assert "auth failed for db1 with password ***" in span.status.description
    assert "pw-RAW-ERROR-99" not in exported(otel)


class AskFirst(InterventionHandler):
    def before_tool_call(self, event: BeforeToolCall) -> Confirm | None:
        return Confirm("fetch?")


@pytest.mark.parametrize("capture", [True, False])
def test_an_approvers_note_quoting_the_calls_secret_is_redacted(otel: Any, capture: bool) -> None:
    key = "live-KEY-NOTE-4242"
    agent = one_call(
        "fetch", {"url": "u", "api_key": key}, tools=[fetch], interventions=[AskFirst()]
    )
    otel.instrument(agent, capture_content=capture)
    suspended = agent("go")
    (interrupt,) = suspended.interrupts
    note = f"no: {key} is the prod key"
    assert agent.resume({interrupt.id: {"approved": False, "reason": note}}).stop_reason
    (span,) = [s for s in otel.named("execute_tool") if s.status.description]
    (deny,) = [e for e in span.events if e.name == "tether.tool.deny"]
    for text in (span.status.description, deny.attributes["tether.reason"]):
        assert "no: *** is the prod key" in text
    assert key not in exported(otel)
