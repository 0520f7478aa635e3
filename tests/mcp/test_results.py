"""Results and tool-list changes, against the SDK-written fixture server over streamable HTTP."""

from __future__ import annotations

import asyncio
import base64

import pytest

from tether import Agent
from tether.mcp import MCPConnectionError, MCPServer
from tether.messages import Image
from tether.models import ScriptedModel

PNG_B64 = (  # the fixture server's picture: one red pixel
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg=="
)


@pytest.fixture
def fixture_http(start_http):
    with MCPServer.http(start_http(), name="fixture") as server:
        yield server


def run_one(server: MCPServer, name: str, args: dict, tools: list | None = None) -> object:
    def script(messages, specs):
        if messages[-1].role == "user":
            return {"tool_calls": [{"name": name, "args": args}]}
        return "ok"

    agent = Agent(ScriptedModel(script), tools=tools or server.tools(), store=None)
    agent("go")
    (result,) = [r for m in agent.messages for r in m.tool_results]
    return result


def test_headers_are_sent_with_every_request(start_http):
    with MCPServer.http(start_http(), headers={"X-Api-Key": "k-123"}) as server:
        assert run_one(server, "header", {"name": "X-Api-Key"}).content == "k-123"


def test_text_and_structured_content(fixture_http):
    assert run_one(fixture_http, "echo", {"text": "hello"}).content == "hello"
    square = run_one(fixture_http, "square", {"n": 7})
    assert square.content == '{"n":7,"square":49}'
    assert not square.is_error


def test_is_error_becomes_an_error_result_the_model_sees(fixture_http):
    result = run_one(fixture_http, "fail", {"message": "the disk is full"})
    assert result.is_error
    assert result.status == "error"
    assert result.content == "Error: MCPToolError: Error executing tool fail: the disk is full"


def test_images_are_attached_and_resources_become_text(fixture_http):
    result = run_one(fixture_http, "picture", {})
    assert result.content.splitlines() == [
        "a red dot",
        "[image 1 (image/png, 70 bytes) attached]",
        "[resource file:///notes.txt, text/plain]",
        "hi",
    ]
    assert result.images == (Image("image/png", PNG_B64),)
    assert base64.b64decode(PNG_B64)[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_too_large_result_is_a_bounded_clear_error(start_http):
    with MCPServer.http(start_http(), name="fixture", max_result_chars=1000) as server:
        assert run_one(server, "big", {"chars": 1000}).content == "x" * 1000
        result = run_one(server, "big", {"chars": 5000})
    assert result.is_error
    assert result.content == (
        "Error: MCPResultTooLarge: tool 'big' returned 5,000 characters, more than "
        "max_result_chars=1,000; ask for less (narrow the arguments), or raise "
        "max_result_chars on the MCPServer"
    )


def test_tools_list_changed_refreshes_the_tools(fixture_http):
    tools = {t.name: t for t in fixture_http.tools()}
    assert "extra" not in tools
    assert run_one(fixture_http, "grow", {}).content == "grown"
    deadline = asyncio.run(_wait_for(lambda: "extra" in {t.name for t in fixture_http.tools()}))
    assert deadline, "the tools/list_changed notification did not refresh the tools"
    now = {t.name: t for t in fixture_http.tools()}
    assert "fail" not in now
    assert tools["fail"].gone
    assert run_one(fixture_http, "extra", {"word": "hi"}).content == '{"result":"HI"}'
    gone = asyncio.run(_invoke(tools["fail"], {"message": "x"}))
    assert (
        str(gone)
        == "tool 'fail' is no longer offered by MCP server 'fixture' (its tool list changed)"
    )


def test_a_server_that_crashes_mid_call_gives_a_clear_error_then_cannot_restart(start_http):
    with MCPServer.http(start_http(), name="fixture", startup_timeout=5) as server:
        tools = server.tools()
        crashed = run_one(server, "crash", {}, tools)
        assert crashed.is_error
        assert crashed.content.startswith("Error: MCPToolError: MCP server 'fixture'"), (
            crashed.content
        )
        again = run_one(server, "echo", {"text": "still there?"}, tools)
        assert again.is_error
        assert again.content.startswith(
            "Error: MCPConnectionError: MCP server 'fixture' went away and could not be "
            "restarted: could not start MCP server 'fixture': "
        ), again.content
        with pytest.raises(MCPConnectionError, match="went away and could not be restarted"):
            server.tools()


async def _wait_for(predicate, within: float = 10.0) -> bool:
    loop = asyncio.get_running_loop()
    end = loop.time() + within
    while loop.time() < end:
        if predicate():
            return True
        await asyncio.sleep(0.05)
    return False


async def _invoke(tool, args):
    try:
        await tool.invoke(args)
    except Exception as exc:
        return exc
    raise AssertionError("the call should have failed")
