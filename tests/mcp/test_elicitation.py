"""Elicitation: a server asks the user during a call, answered through tether's control plane."""

from __future__ import annotations

import sys

from tether import Agent
from tether.mcp import MCPServer
from tether.models import ScriptedModel

from .conftest import fixture_args


def agent_for(server: MCPServer, call: dict, **options) -> Agent:
    def script(messages, specs):
        if messages[-1].role == "user":
            return {"tool_calls": [call]}
        return "done: " + messages[-1].tool_results[0].content

    return Agent(ScriptedModel(script), tools=server.tools(), store=None, **options)


READ = {"name": "ask_read", "args": {"topic": "notes"}}


def test_without_elicitation_the_server_cannot_ask():
    with MCPServer.stdio(sys.executable, fixture_args(), name="fx") as server:
        result = agent_for(server, READ)("go")
    assert result.text == (
        "done: Error: MCPToolError: MCP server 'fx' refused the call to 'ask_read': "
        "Elicitation not supported"
    )


def test_the_confirm_callback_answers_in_process():
    asked = []

    def confirm(request):
        asked.append(request.prompt)
        return {"ok": True, "note": "fine"}

    with MCPServer.stdio(sys.executable, fixture_args(), name="fx", elicitation=True) as server:
        result = agent_for(server, READ, confirm=confirm)("go")
    assert result.text == "done: accept: ok=True note='fine'"
    assert asked[0].startswith("MCP server 'fx' asks, during 'ask_read': Read notes? (fields: ")


def test_the_prompt_a_callback_gets_has_no_raw_control_or_bidi_characters():
    asked = []

    def confirm(request):
        asked.append(request.prompt)
        return "cancel"

    topic = "notes\x1b[2J\x1b]0;pwned\x07\u202egnp.exe\u2066x\nfake line"
    call = {"name": "ask_read", "args": {"topic": topic}}
    with MCPServer.stdio(sys.executable, fixture_args(), name="fx", elicitation=True) as server:
        result = agent_for(server, call, confirm=confirm)("go")
    assert result.text == "done: cancel:"
    (prompt,) = asked
    assert prompt.startswith(
        "MCP server 'fx' asks, during 'ask_read': Read notes\\x1b[2J\\x1b]0;pwned\\x07"
        "\\u202egnp.exe\\u2066x\\x0afake line? (fields: "
    )
    assert prompt.isprintable()


def test_without_a_callback_an_idempotent_call_suspends_and_reruns_with_the_answer():
    with MCPServer.stdio(sys.executable, fixture_args(), name="fx", elicitation=True) as server:
        agent = agent_for(server, READ)
        first = agent("go")
        assert first.stop_reason == "interrupt"
        (pending,) = first.interrupts
        assert pending.name == "mcp-elicitation:1"
        assert pending.reason["message"] == "Read notes?"
        assert pending.reason["server"] == "fx"
        assert sorted(pending.reason["schema"]["properties"]) == ["note", "ok"]
        second = agent.resume({pending.id: {"ok": False}})
    assert second.text == "done: accept: ok=False note=''"


def test_a_non_idempotent_call_is_never_suspended_and_rerun(tmp_path):
    target = tmp_path / "lines.txt"
    call = {"name": "ask_write", "args": {"path": str(target)}}
    with MCPServer.stdio(sys.executable, fixture_args(), elicitation=True) as server:
        result = agent_for(server, call)("go")
    assert result.stop_reason == "end_turn"
    assert result.text == "done: decline"
    assert target.read_text() == "written\n"  # once
