"""``Agent.close()`` closes the tool sources of its whole tree: a sub-agent's MCP server
(a stdio subprocess) at any depth, a workflow node's, one a factory built per call; a
source shared by several agents of the tree is closed once."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from tether import Agent
from tether.agents import as_tool
from tether.mcp import MCPServer
from tether.models import ScriptedModel
from tether.tools import Tool
from tether.workflows import Parallel, Sequential

FIXTURE = str(Path(__file__).parents[1] / "support" / "mcp_fixture_server.py")


def _server(name: str) -> MCPServer:
    """The SDK-written fixture server over stdio (its ``pid`` tool: the process id)."""
    return MCPServer.stdio(sys.executable, [FIXTURE, "stdio"], name=name)


class Counted:
    """A tool source that counts how often it is closed (closing the server it wraps)."""

    def __init__(self, server: MCPServer) -> None:
        self.server = server
        self.closed = 0

    def tools(self) -> list[Tool]:
        return self.server.tools()

    def close(self) -> None:
        self.closed += 1
        self.server.close()


def _pid_agent(name: str, *sources: Any) -> Agent:
    """Calls ``pid`` once, then answers with the process id it got."""

    def turn(messages: list[Any], specs: list[Any]) -> Any:
        if messages[-1].role == "tool":
            return messages[-1].tool_results[0].content
        return {"tool_calls": [{"name": "pid", "args": {}}]}

    return Agent(ScriptedModel(turn), tools=list(sources), name=name)


def _calling(*names: str) -> ScriptedModel:
    """Calls each sub-agent in turn (one call a turn), then answers with their answers
    joined by spaces."""

    def turn(messages: list[Any], specs: list[Any]) -> Any:
        answers = [r.content for m in messages for r in m.tool_results]
        if len(answers) == len(names):
            return " ".join(answers)
        return {"tool_calls": [{"name": names[len(answers)], "args": {"task": "pid?"}}]}

    return ScriptedModel(turn)


def _gone(pid: int, within: float = 10.0) -> bool:
    """Whether process ``pid`` exits within ``within`` seconds (a zombie has exited)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        stat = Path(f"/proc/{pid}/stat")
        try:
            if stat.read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return True
        except (FileNotFoundError, IndexError):
            return True
        time.sleep(0.05)
    return False


def _pids(text: str) -> list[int]:
    return [int(word) for word in text.split()]


def test_close_stops_a_sub_agents_server_two_deep_and_a_shared_one_once() -> None:
    shared = Counted(_server("leaf"))
    leaf = _pid_agent("leaf", shared)
    mid = Agent(_calling("leaf"), tools=[as_tool(leaf, name="leaf")], name="mid")
    # the leaf Agent object is a tool of mid and of the top: one tree, one server
    top = Agent(_calling("mid", "leaf"), tools=[as_tool(mid, name="mid"), leaf.as_tool("leaf")])
    first, second = _pids(top.run("go").text)
    assert first == second  # one server process serves both calls of the shared leaf
    assert not _gone(first, within=0.2)  # running until the top is closed
    top.close()
    assert _gone(first)
    assert shared.closed == 1  # shared by two parents, closed once


def test_close_stops_the_servers_of_agents_a_factory_built_per_call() -> None:
    def fresh() -> Agent:  # a new Agent and a new server per call
        return _pid_agent("worker", _server("worker"))

    top = Agent(_calling("worker", "worker"), tools=[as_tool(fresh, name="worker")])
    first, second = _pids(top.run("go").text)
    assert first != second
    assert not _gone(first, within=0.2)
    assert not _gone(second, within=0.2)
    top.close()
    assert _gone(first)
    assert _gone(second)


def test_closing_a_workflows_agent_stops_its_nodes_servers_at_any_depth() -> None:
    # what a host closes for a factory that returned a workflow: wf.agent (app_loader.py)
    a, b = Counted(_server("a")), Counted(_server("b"))
    wf = Sequential(_pid_agent("a", a), Parallel(_pid_agent("b", b), name="inner"))
    result = wf.run("go")
    assert result.stop_reason == "end_turn"
    pid_a = int(wf.agent.messages[2].tool_results[0].content)  # node a's answer: its pid
    [pid_b] = [int(answer) for answer in json.loads(result.text)]  # the Parallel's join
    assert pid_a != pid_b
    assert not _gone(pid_a, within=0.2)
    wf.agent.close()
    assert _gone(pid_a)
    assert _gone(pid_b)
    assert (a.closed, b.closed) == (1, 1)


def test_a_factory_agent_without_sources_is_let_go_after_its_call() -> None:
    built: list[Agent] = []

    def fresh() -> Agent:
        built.append(Agent(ScriptedModel(["done"]), name="plain"))
        return built[-1]

    def serving() -> Agent:
        return _pid_agent("served", _server("served"))

    plain, served = as_tool(fresh, name="plain"), as_tool(serving, name="served")
    top = Agent(_calling("plain", "plain", "served"), tools=[plain, served])
    top.run("go")
    assert len(built) == 2
    assert plain.subagents() == []  # nothing to close: not kept after the call
    [kept] = served.subagents()  # its server is closed by the top's close()
    [pid] = _pids(top.messages[-1].text.split()[-1])
    top.close()
    assert _gone(pid)
    assert served.subagents() == []  # closed, then let go
    assert kept.tool_sources  # still usable: its source reconnects on first use


def test_a_workflow_closes_like_its_agent_and_as_a_context_manager() -> None:
    a = Counted(_server("a"))
    with Sequential(_pid_agent("a", a), name="flow") as wf:
        assert wf.run("go").stop_reason == "end_turn"
        pid = int(wf.agent.messages[2].tool_results[0].content)
        assert not _gone(pid, within=0.2)
    assert _gone(pid)
    assert a.closed == 1
    Sequential(_pid_agent("b")).close()  # never ran: nothing built, nothing to close
