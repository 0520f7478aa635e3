"""``tether mcp serve`` answers through the one decision path: the host's answers decide the
approval rows (``decided_by`` names the host), an elicitation may carry an edit that obeys
the edit rule, the questions and results show what the inbox shows (``***``), a suspended
run says so in ``structuredContent``, and the SDK does not log per request."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from deploy_app import SECRET, ran
from mcp_types import ElicitResult
from ops_cli import cli

from mcp import ClientSession, StdioServerParameters, stdio_client
from tether.durable import SQLiteStore

SUPPORT = Path(__file__).parents[1] / "support"
CLI = "from tether.ops.cli import main; main()"


@contextmanager
def http_ok() -> Iterator[str]:
    """A local HTTP server answering 200 to every GET: its URL."""

    class Ok(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Ok)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/ping"
    finally:
        httpd.shutdown()
        httpd.server_close()


async def call(
    tmp_path: Path, answer: Any = None, env: dict[str, str] | None = None
) -> tuple[Any, list[Any]]:
    """Serve deploy_app over stdio and call run_agent; ``answer(params)`` answers
    elicitations (None: the client offers none). Returns (the result, the questions)."""
    asked: list[Any] = []

    async def elicit(context: Any, params: Any) -> ElicitResult:
        asked.append(params)
        return answer(params)

    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", CLI, "mcp", "serve", "--app", "deploy_app:factory"],
        cwd=str(SUPPORT),
        env={
            **os.environ,
            "DEPLOY_LOG": str(tmp_path / "deploys.jsonl"),
            "DEPLOY_DB": str(tmp_path / "deploy.db"),
            **(env or {}),
        },
    )
    with open(tmp_path / "stderr.txt", "w") as errlog:  # noqa: ASYNC230 - the child's stderr
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(
                read, write, elicitation_callback=elicit if answer is not None else None
            ) as session,
        ):
            await session.initialize()
            result = await session.call_tool("run_agent", {"prompt": "ship it"})
    return result, asked


def _approve(edit: str = "") -> ElicitResult:
    return ElicitResult(action="accept", content={"approve": True, "note": "", "edit": edit})


def test_an_edited_elicitation_runs_within_the_policy_and_decides_the_row(tmp_path):
    answers = iter([_approve('{"env": "prod", "replicas": 2}'), _approve('{"replicas": 2}')])
    with http_ok() as url:  # the tool makes a real httpx request: no INFO line reaches stderr
        result, asked = asyncio.run(
            call(tmp_path, lambda params: next(answers), {"DEPLOY_PING": url})
        )
    assert not result.is_error, result
    assert result.content[0].text == "done: deployed 2 to staging"
    assert result.structured_content["status"] == "completed"
    assert ran(str(tmp_path / "deploys.jsonl")) == [
        {"env": "staging", "replicas": 2, "api_token": SECRET}
    ]
    first, second = asked
    # what the host is asked about is the call as it will run, masked like the inbox
    assert '"env": "staging"' in first.message
    assert '"api_token": "***"' in first.message
    assert SECRET not in first.message + second.message
    assert "policy 'PinStaging' would rewrite field 'env'" in second.message
    assert set(first.requested_schema["properties"]) == {"approve", "note", "edit"}

    db = str(tmp_path / "deploy.db")
    [row] = asyncio.run(SQLiteStore(db).approvals.find())
    assert row.status == "approved"
    assert row.decision == "approve_edited"
    assert row.edited_args == {"replicas": 2}
    assert row.decided_by.startswith("mcp host mcp")  # the SDK client's own name
    # the inbox cannot decide it again: refused, nothing recorded
    late = cli("approvals", "deny", row.id, "--note", "do NOT deploy", "--store", db)
    assert late.exit_code != 0
    assert "already decided" in late.output
    assert asyncio.run(SQLiteStore(db).approvals.get(row.id)).status == "approved"
    stderr = (tmp_path / "stderr.txt").read_text()
    assert "HTTP Request" not in stderr, stderr


def test_a_suspended_run_says_so_in_structured_content_without_secrets(tmp_path):
    result, asked = asyncio.run(call(tmp_path, None))
    assert asked == []
    assert not result.is_error
    structured = result.structured_content
    assert structured["status"] == "suspended"
    assert structured["stop_reason"] == "interrupt"
    [pending] = structured["pending"]
    assert pending["tool"] == "deploy"
    assert pending["arguments"] == {"env": "staging", "replicas": 5, "api_token": "***"}
    assert SECRET not in json.dumps(structured) + result.content[0].text
    [row] = asyncio.run(SQLiteStore(tmp_path / "deploy.db").approvals.pending())
    assert row.interrupt_id == pending["id"]
    assert row.session_id == structured["session_id"]
