"""Newcomer friction at the provider: a 401 from an Anthropic-compatible server names the
auth header, and every retried attempt logs a warning (a slow call says why)."""

from __future__ import annotations

import logging

import pytest
from fault_models import claude_at

from tether.messages import Message
from tether.models import AnthropicModel, ProviderError, RetryPolicy
from tether.models.base import ModelRequest

FAST = RetryPolicy(max_attempts=3, base_delay=0.001, max_delay=0.005, stale_timeout=20)
KEY = "sk-ant-fault-7f3e9d"
REQUEST = ModelRequest([Message.user("hi")], [], "sys")


async def _drain(model: AnthropicModel) -> list[object]:
    return [e async for e in model.stream(REQUEST)]


async def test_a_401_from_a_custom_base_url_names_the_header_and_default_headers(fault):
    model = claude_at(fault, "e401", tag="hint", retry=FAST)
    model = AnthropicModel(model.model, api_key=KEY, base_url=fault.url + "/", retry=FAST)
    with pytest.raises(ProviderError) as caught:
        await _drain(model)
    message = str(caught.value)
    assert caught.value.status == 401
    assert "invalid x-api-key" in message  # the server's own words stay
    host = fault.url.split("://", 1)[1]
    assert f"the server at http://{host}/ refused the credentials sent in the " in message
    sent = message.split("credentials sent in the ", 1)[1].split(" header", 1)[0]
    [request] = fault.app.state.recorder.for_model(model.model)
    assert {h.lower() for h in sent.split(", ")} <= set(request["headers"])
    assert "default_headers={'x-api-key': '<key>'}" in message
    assert KEY not in message


async def test_default_headers_carry_the_key_the_server_expects(fault):
    model = claude_at(fault, "text", tag="xkey", retry=FAST, default_headers={"x-api-key": KEY})
    await _drain(model)
    [request] = fault.app.state.recorder.for_model(model.model)
    assert request["headers"]["x-api-key"] == KEY


async def test_a_401_from_a_credentialed_base_url_never_shows_them(fault):
    host = fault.url.split("://", 1)[1]
    model = claude_at(fault, "e401", tag="userinfo", retry=FAST)
    model = AnthropicModel(model.model, api_key=KEY, base_url=f"http://u:pw@{host}", retry=FAST)
    with pytest.raises(ProviderError) as caught:
        await _drain(model)
    assert f"the server at http://{host} refused" in str(caught.value)
    assert "u:pw@" not in str(caught.value)


async def test_the_hint_is_only_for_a_refused_key(fault):
    model = claude_at(fault, "e404", tag="nohint", retry=FAST)
    with pytest.raises(ProviderError) as caught:
        await _drain(model)
    assert "default_headers" not in str(caught.value)
    official = AnthropicModel("claude-x", api_key=KEY)  # no base_url: the real API
    from tether.models.failover import FailoverReason

    assert official._hint(FailoverReason.AUTH) == ""


async def test_every_retry_logs_a_warning_with_reason_attempt_and_delay(fault, caplog):
    model = claude_at(fault, "e529,e529,text", tag="warn", retry=FAST)
    with caplog.at_level(logging.WARNING, logger="tether.models"):
        events = await _drain(model)
    warnings = [r for r in caplog.records if r.name == "tether.models"]
    assert [r.levelno for r in warnings] == [logging.WARNING] * 2
    first, second = (r.getMessage() for r in warnings)
    assert first.startswith(f"model anthropic:{model.model}: attempt 1 of 3 failed (overloaded): ")
    assert "Overloaded" in first
    assert "; retrying in " in first
    assert "attempt 2 of 3 failed (overloaded)" in second
    assert len(fault.app.state.recorder.for_model(model.model)) == 3
    assert any(type(e).__name__ == "ModelStop" for e in events)
