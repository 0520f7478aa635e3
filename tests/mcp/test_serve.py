"""``tether mcp serve``: a governed agent as an MCP tool, driven by the SDK's own client over
stdio; its Confirm reaches the host as an elicitation."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from mcp_types import ElicitResult
from typer.testing import CliRunner

from mcp import ClientSession, StdioServerParameters, stdio_client
from tether.durable import SQLiteStore
from tether.ops.cli import app

SUPPORT = Path(__file__).parents[1] / "support"
CLI = "from tether.ops.cli import main; main()"


async def call(tmp_path: Path, prompt: str, answer: Any = None, *, env: dict | None = None):
    """Start the server, call run_agent(prompt); ``answer(params)`` answers elicitations
    (None: the client offers no elicitation). Returns (tool names, result text, asked)."""
    asked: list[Any] = []

    async def elicit(context: Any, params: Any) -> ElicitResult:
        asked.append(params)
        return answer(params)

    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", CLI, "mcp", "serve", "--app", "mcp_served_app:factory"],
        cwd=str(SUPPORT),
        env={**os.environ, "SERVED_LOG": str(tmp_path / "deleted.txt"), **(env or {})},
    )
    with open(tmp_path / "stderr.txt", "w") as errlog:  # noqa: ASYNC230 - the child's stderr
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(
                read, write, elicitation_callback=elicit if answer is not None else None
            ) as session,
        ):
            await session.initialize()
            tools = [t.name for t in (await session.list_tools()).tools]
            result = await session.call_tool("run_agent", {"prompt": prompt})
    assert not result.is_error, result
    return tools, result.content[0].text, asked


def deleted(tmp_path: Path) -> list[str]:
    path = tmp_path / "deleted.txt"
    return path.read_text().split() if path.exists() else []


def test_an_approved_confirm_runs_the_tool_and_returns_the_answer(tmp_path):
    def approve(params):
        return ElicitResult(action="accept", content={"approve": True, "note": ""})

    tools, text, asked = asyncio.run(call(tmp_path, "/tmp/x", approve))
    assert tools == ["run_agent"]
    assert text == "done: deleted /tmp/x"
    (question,) = asked
    assert "intervention" in question.message
    assert '(tool delete {"path": "/tmp/x"}): delete /tmp/x?' in question.message
    assert set(question.requested_schema["properties"]) == {"approve", "note", "edit"}
    assert deleted(tmp_path) == ["/tmp/x"]


def test_a_refused_confirm_reaches_the_model_with_the_note(tmp_path):
    def refuse(params):
        return ElicitResult(action="accept", content={"approve": False, "note": "keep it"})

    _, text, _ = asyncio.run(call(tmp_path, "/tmp/y", refuse))
    assert text.startswith("done: ")
    assert "keep it" in text
    assert deleted(tmp_path) == []


def test_a_host_without_elicitation_gets_a_suspended_session_in_the_inbox(tmp_path):
    db = tmp_path / "served.db"
    _, text, asked = asyncio.run(call(tmp_path, "/tmp/z", None, env={"SERVED_DB": str(db)}))
    assert asked == []
    assert text.startswith("session mcp-")
    assert "is suspended, waiting for a person to answer 1 question(s)" in text
    assert "delete /tmp/z?" in text
    assert deleted(tmp_path) == []
    (approval,) = asyncio.run(SQLiteStore(db).approvals.pending())
    assert approval.tool == "delete"
    assert approval.session_id in text


def test_a_declined_elicitation_leaves_the_session_suspended(tmp_path):
    _, text, asked = asyncio.run(
        call(tmp_path, "/tmp/w", lambda params: ElicitResult(action="decline"))
    )
    assert len(asked) == 1
    assert "is suspended" in text
    assert deleted(tmp_path) == []


def test_a_host_that_declines_one_of_two_questions_gets_the_other_call_run(tmp_path):
    # targeted resume (issue 23): the approved delete runs, the declined one stays pending
    db = tmp_path / "served.db"

    def first_only(params):
        if "/tmp/one" in params.message:
            return ElicitResult(action="accept", content={"approve": True, "note": ""})
        return ElicitResult(action="decline")

    _, text, asked = asyncio.run(
        call(tmp_path, "/tmp/one /tmp/two", first_only, env={"SERVED_DB": str(db)})
    )
    assert len(asked) == 2
    assert deleted(tmp_path) == ["/tmp/one"]
    assert "is suspended, waiting for a person to answer 1 question(s)" in text
    assert "delete /tmp/two?" in text
    (approval,) = asyncio.run(SQLiteStore(db).approvals.pending())
    assert approval.arguments == {"path": "/tmp/two"}


def test_a_bad_app_is_refused_before_serving():
    out = CliRunner().invoke(app, ["mcp", "serve", "--app", "no_such_module:factory"])
    assert out.exit_code != 0
    assert "cannot import 'no_such_module'" in out.output
