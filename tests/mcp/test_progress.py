"""MCP progress notifications become ToolProgress stream events, live, before the call ends."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tether import Agent
from tether.events import FinalResult, StreamEvent, ToolFinished, ToolProgress
from tether.mcp import MCPServer
from tether.models import ScriptedModel


def test_progress_notifications_arrive_as_stream_events_before_the_call_finishes(
    start_http, tmp_path: Path
) -> None:
    gate = tmp_path / "gate"
    call = {"id": "p1", "name": "progress", "args": {"steps": 3, "gate": str(gate)}}
    with MCPServer.http(start_http(), name="fixture", allow=["progress"]) as server:
        agent = Agent(
            ScriptedModel([{"tool_calls": [call]}, "done"]), tools=server.tools(), store=None
        )

        async def main() -> list[StreamEvent]:
            events: list[StreamEvent] = []
            async for event in agent.stream("go"):
                events.append(event)
                if isinstance(event, ToolProgress) and event.progress == 3:
                    gate.write_text("open")  # the server's call waits for this file
            return events

        events = asyncio.run(main())
    progress = [e for e in events if isinstance(e, ToolProgress)]
    assert progress == [
        ToolProgress("progress", "p1", "", step, 3, f"step {step} of 3") for step in (1, 2, 3)
    ]
    [finished] = [i for i, e in enumerate(events) if isinstance(e, ToolFinished)]
    assert events[finished].result.content == "through the gate"
    assert events.index(progress[-1]) < finished
    assert isinstance(events[-1], FinalResult)
    assert events[-1].result.text == "done"
