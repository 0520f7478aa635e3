"""OpenAI Agents SDK runner of bench/temporal.py (bench/.venvs/openai-agents-temporal):
the SDK's Temporal integration (``temporalio.openai_agents.OpenAIAgentsPlugin``, what
``temporalio.contrib.openai_agents`` forwards to) with an instant scripted model given
as its ``model_provider`` (no network). ``--variant sandboxed`` (the SDK's default) or
``unsandboxed`` (as tether's AgentWorkflow)."""

from __future__ import annotations

import argparse
import json
import uuid
from datetime import timedelta
from importlib.metadata import version
from typing import Any

from _openai_agents_temporal_workflows import SandboxedAgentWorkflow, UnsandboxedAgentWorkflow, add
from _temporal_harness import ANSWER, PROMPT, TOOL_ARGS, history_counts, measure, run
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)
from temporalio.client import Client
from temporalio.openai_agents import ModelActivityParameters, OpenAIAgentsPlugin
from temporalio.worker import Worker

from agents import ModelProvider, set_tracing_disabled

WORKFLOWS = {"sandboxed": SandboxedAgentWorkflow, "unsandboxed": UnsandboxedAgentWorkflow}


class ScriptedModel(Model):
    """Call ``add`` first; answer once its output is in the input."""

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        items = kwargs.get("input", args[1] if len(args) > 1 else None)
        last = items[-1] if isinstance(items, list) and items else {}
        if isinstance(last, dict) and last.get("type") == "function_call_output":
            output: list[Any] = [
                ResponseOutputMessage(
                    id="msg_1",
                    content=[ResponseOutputText(annotations=[], text=ANSWER, type="output_text")],
                    role="assistant",
                    status="completed",
                    type="message",
                )
            ]
        else:
            output = [
                ResponseFunctionToolCall(
                    arguments=json.dumps(TOOL_ARGS),
                    call_id="call_1",
                    name="add",
                    type="function_call",
                    id="fc_1",
                    status="completed",
                )
            ]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


class Scripted(ModelProvider):
    def get_model(self, model_name: str | None) -> Model:
        return ScriptedModel()


async def main(args: argparse.Namespace) -> dict[str, Any]:
    set_tracing_disabled(True)  # its exporter would upload spans; tether's tracing is off too
    variant = args.variant or "sandboxed"
    flow = WORKFLOWS[variant]
    plugin = OpenAIAgentsPlugin(
        model_params=ModelActivityParameters(start_to_close_timeout=timedelta(seconds=30)),
        model_provider=Scripted(),
    )
    client = await Client.connect(args.address, plugins=[plugin])
    queue, run_id = f"bench-oa-{uuid.uuid4().hex[:8]}", uuid.uuid4().hex[:8]

    async def invoke(i: int) -> str:
        return str(
            await client.execute_workflow(
                flow.run, PROMPT, id=f"oa-{variant}-{run_id}-{i}", task_queue=queue
            )
        )

    async with Worker(client, task_queue=queue, workflows=[flow], activities=[add]):
        timing = await measure(invoke, args.invocations, args.warmup)
    last = args.warmup + args.invocations - 1
    return {
        "framework": "openai-agents",
        "variant": variant,
        "openai_agents": version("openai-agents"),
        "temporalio_openai_agents": version("temporalio-openai-agents"),
        "temporalio": version("temporalio"),
        **timing,
        "history": await history_counts(client, f"oa-{variant}-{run_id}-{last}"),
    }


if __name__ == "__main__":
    run(main)
