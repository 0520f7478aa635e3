"""``tether mcp serve --app workflow_app:workflow_factory``: a factory returning a workflow
serves as one MCP tool; the legal branch's Confirm reaches the host as an elicitation and
the workflow runs to its end. A factory of neither is refused before the protocol starts."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from mcp_types import ElicitResult
from typer.testing import CliRunner

from mcp import ClientSession, StdioServerParameters, stdio_client
from tether.ops.cli import app

SUPPORT = Path(__file__).parents[1] / "support"
CLI = "from tether.ops.cli import main; main()"


async def _run(tmp_path: Path, answer: Any) -> tuple[Any, list[Any]]:
    asked: list[Any] = []

    async def elicit(context: Any, params: Any) -> ElicitResult:
        asked.append(params)
        return answer(params)

    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", CLI, "mcp", "serve", "--app", "workflow_app:workflow_factory"],
        cwd=str(SUPPORT),
        env={**os.environ, "TETHER_WORKFLOW_OUT": str(tmp_path / "out.txt")},
    )
    with open(tmp_path / "stderr.txt", "w") as errlog:  # noqa: ASYNC230 - the child's stderr
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write, elicitation_callback=elicit) as session,
        ):
            await session.initialize()
            result = await session.call_tool(
                "run_agent", {"prompt": "the plan", "session_id": "wf-mcp"}
            )
    return result, asked


def test_a_workflow_runs_to_its_end_with_the_branchs_confirm_elicited(tmp_path: Path) -> None:
    def approve(params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"approve": True, "note": ""})

    result, asked = asyncio.run(_run(tmp_path, approve))
    assert not result.is_error, result
    [question] = asked
    assert " in review#2/legal#1 (tool write " in question.message  # where it was asked
    assert "write 'legal'?" in question.message
    assert result.structured_content["status"] == "completed"
    assert result.structured_content["session_id"] == "wf-mcp"
    text = result.content[0].text
    assert text.startswith('summary: ["legal wrote (ok legal)", "tech: ')
    assert (tmp_path / "out.txt").read_text().splitlines() == ["wf-mcp legal"]


def test_a_factory_of_neither_is_refused_before_the_protocol_starts(
    monkeypatch: Any,
) -> None:
    monkeypatch.chdir(SUPPORT)
    done = CliRunner().invoke(app, ["mcp", "serve", "--app", "workflow_app:not_an_app"])
    assert done.exit_code == 1
    said = " ".join(done.output.split())
    assert "workflow_app:not_an_app is annotated to return str, not an Agent or a Workflow" in said
