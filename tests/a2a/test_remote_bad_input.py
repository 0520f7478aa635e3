"""RemoteAgent's untrusted inputs: the URL it is given, the card, the remote's answers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from a2a_sdk_server import serve
from live_server import live_server
from remote_agents import script
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tether import Agent
from tether.a2a import RemoteAgent
from tether.a2a.remote_card import MAX_CARD_BYTES
from tether.a2a.remote_errors import RemoteAgentError
from tether.errors import ConfigurationError, SubAgentError, TetherError
from tether.models import ScriptedModel


@contextmanager
def card_server(body: bytes) -> Iterator[str]:
    async def card(request: Request) -> Response:
        return Response(body, media_type="application/json")

    with live_server(Starlette(routes=[Route("/.well-known/agent-card.json", card)])) as base:
        yield base


def a_card(rpc: str, **extra: object) -> bytes:
    data = {
        "name": "odd\u202eagent\x1b[31m",
        "description": "Does things.",
        "version": "1",
        "supportedInterfaces": [
            {"url": rpc, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [],
        **extra,
    }
    return json.dumps(data).encode()


def test_a_url_that_is_not_http_is_refused_at_construction() -> None:
    with pytest.raises(ConfigurationError, match="RemoteAgent url must be an http"):
        RemoteAgent("file:///etc/passwd", name="x", description="y")


def test_remote_agent_errors_are_tether_errors() -> None:
    assert issubclass(RemoteAgentError, SubAgentError)
    assert issubclass(RemoteAgentError, TetherError)


def test_an_oversized_card_is_refused() -> None:
    with (
        card_server(b" " * (MAX_CARD_BYTES + 1)) as base,
        pytest.raises(RemoteAgentError, match=f"is over {MAX_CARD_BYTES} bytes"),
    ):
        RemoteAgent(base)


def test_a_card_that_is_not_json_is_refused() -> None:
    with (
        card_server(b"<html>") as base,
        pytest.raises(RemoteAgentError, match="is not a valid A2A card"),
    ):
        RemoteAgent(base)


def test_a_card_pointing_its_interface_at_another_host_is_refused() -> None:
    with (
        card_server(a_card("http://169.254.169.254/a2a")) as base,
        pytest.raises(RemoteAgentError, match="another origin; tether only calls the host"),
    ):
        RemoteAgent(base)


def test_the_cards_text_is_cleaned_into_a_valid_tool_name_and_description() -> None:
    async def card(request: Request) -> Response:
        rpc = f"{request.base_url}a2a"
        body = a_card(rpc, description="Line\u202e one\x07 " + "x" * 5000)
        return Response(body, media_type="application/json")

    with live_server(Starlette(routes=[Route("/.well-known/agent-card.json", card)])) as base:
        tool = RemoteAgent(base)
    assert tool.name == "odd_agent_31m"
    assert "\u202e" not in tool.description
    assert "\x07" not in tool.description
    assert tool.description.startswith("Line one")
    assert len(tool.description) <= 1000


def test_a_bearer_token_is_sent_and_a_missing_one_is_a_clear_error() -> None:
    with serve(token="s3cret") as base:
        with pytest.raises(RemoteAgentError, match="answered HTTP 401"):
            RemoteAgent(base)
        tool = RemoteAgent(base, token="s3cret")
        agent = Agent(model=ScriptedModel(script("fail fast")), tools=[tool])
        result = agent("go")
    assert result.text.endswith(" failed: the paint ran out")


def test_a_remote_that_refuses_the_token_mid_call_is_a_tool_error_and_nothing_is_in_doubt() -> None:
    with serve(token="s3cret") as base:
        tool = RemoteAgent(base, token="wrong", name="painter", description="Paints.")
        agent = Agent(model=ScriptedModel(script("paint it")), tools=[tool])
        result = agent("go")
    assert result.stop_reason == "end_turn"
    assert "caller got (error): Error: RemoteAgentError: " in result.text
    assert "answered HTTP 401" in result.text
    assert agent.conversation.state == {}


def test_an_oversized_remote_response_ends_the_call_with_a_tool_error() -> None:
    from tether.a2a.remote_client import MAX_RESPONSE_BYTES

    async def card(request: Request) -> Response:
        body = a_card(f"{request.base_url}a2a")
        return Response(body, media_type="application/json")

    async def rpc(request: Request) -> Response:
        return Response(b" " * (MAX_RESPONSE_BYTES + 1), media_type="application/json")

    routes = [Route("/.well-known/agent-card.json", card), Route("/a2a", rpc, methods=["POST"])]
    with live_server(Starlette(routes=routes)) as base:
        agent = Agent(
            model=ScriptedModel(script("paint it")), tools=[RemoteAgent(base, name="painter")]
        )
        result = agent("go")
    assert result.stop_reason == "end_turn"
    assert result.text.startswith("caller got (error): Error: RemoteAgentError: ")
    assert f"is over {MAX_RESPONSE_BYTES} bytes" in result.text
    assert agent.conversation.state == {}
