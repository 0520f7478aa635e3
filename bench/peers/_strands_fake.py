"""The instant fake model the Strands runners share (run in bench/.venvs/strands).

Strands only calls ``Model.stream``, so a fake yields the minimal Bedrock-style stream
events of each scripted reply: `tool_use_events` (one tool call) and `text_events` (a
text answer), each optionally closed by a ``metadata`` usage event. `FakeModel` fills
in the rest of the ``strands.models.Model`` interface, which these runs never use;
each runner subclasses it with its own ``stream`` (what it counts and says). `add_tool`
makes the workload's ``add`` tool, counting its calls in the runner's harness counters;
`subject` hands an agent to the harness (fresh conversation: ``agent.messages = []``).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from importlib.metadata import version
from typing import Any

from _harness import PROMPT, Subject
from strands import Agent, tool
from strands.agent import AgentResult
from strands.models import Model
from strands.types.content import Messages
from strands.types.streaming import StreamEvent


def tool_use_events(
    name: str, tool_input: str, tool_use_id: str = "call_1", usage: dict[str, int] | None = None
) -> list[StreamEvent]:
    """One tool call of ``name`` with ``tool_input`` (JSON text)."""
    events: list[StreamEvent] = [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockStart": {"start": {"toolUse": {"name": name, "toolUseId": tool_use_id}}}},
        {"contentBlockDelta": {"delta": {"toolUse": {"input": tool_input}}}},
        {"contentBlockStop": {}},
        {"messageStop": {"stopReason": "tool_use"}},
    ]
    if usage is not None:
        events.append(_metadata(usage))
    return events


def text_events(text: str, usage: dict[str, int] | None = None) -> list[StreamEvent]:
    """A text answer."""
    events: list[StreamEvent] = [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockStart": {"start": {}}},
        {"contentBlockDelta": {"delta": {"text": text}}},
        {"contentBlockStop": {}},
        {"messageStop": {"stopReason": "end_turn"}},
    ]
    if usage is not None:
        events.append(_metadata(usage))
    return events


def _metadata(usage: dict[str, int]) -> StreamEvent:
    return {"metadata": {"usage": usage, "metrics": {"latencyMs": 0}}}  # type: ignore[typeddict-item]


def answered(messages: Messages) -> bool:
    """Whether the latest message carries a tool result (time for the answer)."""
    return any("toolResult" in block for block in messages[-1]["content"])


class FakeModel(Model):
    """The parts of ``strands.models.Model`` a fake needs but Strands never calls here."""

    def update_config(self, **model_config: Any) -> None:
        pass

    def get_config(self) -> dict[str, Any]:
        return {}

    def structured_output(self, *args: Any, **kwargs: Any) -> AsyncGenerator[Any, None]:
        raise NotImplementedError("not used by this benchmark")


def add_tool(counts: Any) -> Any:
    """The workload's ``@tool async def add(a, b)``, bumping ``counts.tool_calls``."""

    @tool
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        counts.tool_calls += 1
        return a + b

    return add


def subject(agent: Agent, text_of: Callable[[AgentResult], str], setup: str) -> Subject:
    """The harness's Subject for ``agent``: ``invoke_async(PROMPT)``, reset by emptying
    ``agent.messages``."""

    def reset() -> None:
        agent.messages = []

    return Subject(
        name="Strands",
        version=f"strands-agents {version('strands-agents')}",
        invoke=lambda: agent.invoke_async(PROMPT),
        reset=reset,
        text_of=text_of,
        setup=setup,
    )
