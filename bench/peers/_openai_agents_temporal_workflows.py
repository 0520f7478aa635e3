"""The OpenAI Agents SDK agent of bench/temporal.py as Temporal workflows: ``add`` as an
activity tool (``activity_as_tool``), the model call an activity (the plugin's), 2 model
calls and 1 tool call. Twice: in the workflow sandbox (the SDK's default) and unsandboxed
(as tether's AgentWorkflow runs)."""

from __future__ import annotations

from datetime import timedelta

from temporalio import activity, workflow

with workflow.unsafe.imports_passed_through():
    from temporalio.openai_agents.workflow import activity_as_tool

    from agents import Agent, Runner


@activity.defn
async def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


async def _answer(prompt: str) -> str:
    agent: Agent[None] = Agent(
        name="adder",
        instructions="Add with the tool.",
        tools=[activity_as_tool(add, start_to_close_timeout=timedelta(seconds=30))],
    )
    result = await Runner.run(agent, prompt)
    return str(result.final_output)


@workflow.defn(name="bench.OpenAIAgentsSandboxed")
class SandboxedAgentWorkflow:
    @workflow.run
    async def run(self, prompt: str) -> str:
        return await _answer(prompt)


@workflow.defn(name="bench.OpenAIAgentsUnsandboxed", sandboxed=False)
class UnsandboxedAgentWorkflow:
    @workflow.run
    async def run(self, prompt: str) -> str:
        return await _answer(prompt)
