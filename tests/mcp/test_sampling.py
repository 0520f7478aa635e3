"""Sampling requests from a server: refused by default, answered by a governed Agent."""

from __future__ import annotations

import asyncio
import sys

import pytest

from tether import Agent
from tether.control import BeforeModelCall, Deny, InterventionHandler
from tether.mcp import MCPServer, MCPToolError
from tether.models import ScriptedModel

from .conftest import fixture_args


def ask(server: MCPServer, question: str) -> str:
    tool = {t.name: t for t in server.tools()}["ask"]
    return asyncio.run(tool.invoke({"question": question}))


def test_sampling_is_refused_by_default():
    with (
        MCPServer.stdio(sys.executable, fixture_args(), name="fx") as server,
        pytest.raises(MCPToolError) as info,
    ):
        ask(server, "what is 6 x 7?")
    assert str(info.value) == "MCP server 'fx' refused the call to 'ask': Sampling not supported"


def test_a_sampling_agent_answers_under_its_own_hooks():
    seen = []

    def model(messages, specs):
        seen.append([(m.role, m.text) for m in messages])
        return "42"

    sampler = Agent(ScriptedModel(model, name="oracle"), system_prompt="unused", store=None)

    @sampler.on(BeforeModelCall)
    def record(event):
        seen.append(event.agent.system_prompt)

    own = sampler.runtime

    with MCPServer.stdio(sys.executable, fixture_args(), sampling=sampler) as server:
        assert ask(server, "what is 6 x 7?") == "oracle said: 42"
        assert ask(server, "and 5 x 5?") == "oracle said: 42"
    assert seen == [
        "Answer in one word.",
        [("user", "what is 6 x 7?")],
        "Answer in one word.",
        [("user", "and 5 x 5?")],  # a fresh conversation per request
    ]
    assert sampler.system_prompt == "unused"
    # each request runs a runtime of its own: the agent is never set from outside
    assert sampler.runtime is own
    assert sampler.messages == []


def test_an_intervention_can_refuse_a_sampling_request():
    class NoSampling(InterventionHandler):
        def before_model_call(self, event):
            return Deny("servers may not use our model")

    sampler = Agent(ScriptedModel(["never"]), interventions=[NoSampling()], store=None)
    with (
        MCPServer.stdio(sys.executable, fixture_args(), name="fx", sampling=sampler) as server,
        pytest.raises(MCPToolError) as info,
    ):
        ask(server, "hello?")
    assert (
        "sampling was not answered (stop reason blocked: denied by policy 'NoSampling': servers may not use our model)"
        in str(info.value)
    )
