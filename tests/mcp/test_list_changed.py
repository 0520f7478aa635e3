"""An agent holding an MCP server takes up tools/list_changed at its next model call."""

from __future__ import annotations

from tether import Agent
from tether.mcp import MCPServer
from tether.models import ScriptedModel


def test_an_agent_takes_up_added_tools_and_drops_removed_ones_at_the_next_model_call(
    start_http,
):
    offered: list[list[str]] = []

    def script(messages, specs):
        offered.append(sorted(s["name"] for s in specs))
        if len(offered) == 1:
            return {"tool_calls": [{"name": "grow", "args": {}}]}
        if len(offered) == 2:  # the model still calls the tool the server dropped
            return {
                "tool_calls": [
                    {"name": "extra", "args": {"word": "hi"}},
                    {"name": "fail", "args": {"message": "x"}},
                ]
            }
        return "done"

    with MCPServer.http(start_http(), name="fixture") as server:
        agent = Agent(ScriptedModel(script), tools=[server], store=None)
        result = agent("go")
        assert result.stop_reason == "end_turn"
        assert "fail" in offered[0]
        assert "extra" not in offered[0]
        assert "extra" in offered[1]
        assert "fail" not in offered[1]
        assert offered[2] == offered[1]
        assert sorted(agent.tool_map) == offered[1]
        extra, fail = agent.messages[-2].tool_results
        assert extra.content == '{"result":"HI"}'
        assert fail.is_error
        assert fail.content.startswith("Error: Unknown tool 'fail'. Available tools: ask, ")
        assert "extra" in fail.content

        # The next invocation of the same agent keeps the new tools.
        offered.clear()
        offered.append([])  # skip the grow turn
        agent("again")
        assert "extra" in offered[1]
        assert "fail" not in offered[1]


def test_an_agent_given_a_fixed_list_of_tools_keeps_it(start_http):
    """tools=server.tools() (a list, not the server) is a fixed choice: nothing is taken up."""
    offered: list[list[str]] = []

    def script(messages, specs):
        offered.append(sorted(s["name"] for s in specs))
        return {"tool_calls": [{"name": "grow", "args": {}}]} if len(offered) == 1 else "done"

    with MCPServer.http(start_http(), name="fixture") as server:
        agent = Agent(ScriptedModel(script), tools=server.tools(), store=None)
        agent("go")
    assert offered[0] == offered[1]
    assert "extra" not in offered[1]
