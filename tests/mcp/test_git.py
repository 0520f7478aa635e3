"""mcp-server-git on a temporary repository: a write under a Confirm, in one process and two."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tether.mcp import MCPServer

from .conftest import GIT_SERVER, git

APP = Path(__file__).parents[1] / "support" / "mcp_git_app.py"
sys.path.insert(0, str(APP.parent))
from mcp_git_app import build  # noqa: E402


@pytest.fixture
def staged(repo: Path) -> Path:
    git(repo, "add", "new.txt")
    return repo


def commits(repo: Path) -> list[str]:
    return git(repo, "log", "--format=%s").split()


def run_app(*args: str) -> dict:
    out = subprocess.run(
        [sys.executable, str(APP), *args], capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_git_tools_carry_their_annotations(staged):
    with MCPServer.stdio(GIT_SERVER, ["--repository", str(staged)]) as server:
        tools = {t.name: t for t in server.tools()}
    assert tools["git_status"].read_only
    assert not tools["git_commit"].read_only
    assert not tools[
        "git_commit"
    ].destructive  # the server says so: ConfirmDestructive(writes=True) asks anyway
    assert tools["git_reset"].destructive


@pytest.mark.parametrize(
    ("approve", "expected"), [(False, ["first"]), (True, ["add", "new.txt", "first"])]
)
def test_a_write_runs_only_when_the_human_approves(staged, approve, expected):
    asked = []

    def confirm(request):
        asked.append(request.prompt)
        return approve

    with MCPServer.stdio(GIT_SERVER, ["--repository", str(staged)]) as server:
        agent = build(None, None, str(staged), server, confirm=confirm)
        result = agent("commit the staged file")
    assert result.stop_reason == "end_turn"
    assert asked == [
        f"run writing tool 'git_commit' of MCP server 'mcp-server-git' with arguments "
        f'{{"repo_path": "{staged}", "message": "add new.txt"}}?'
    ]
    assert commits(staged) == expected
    status, commit = [r for m in agent.messages for r in m.tool_results]
    assert not status.is_error  # the read-only call ran without asking
    if approve:
        assert not commit.is_error
        assert "Changes committed successfully" in commit.content
    else:
        assert commit.status == "denied"


def test_suspend_on_the_confirm_then_resume_in_another_process(staged, tmp_path):
    db, session = str(tmp_path / "tether.db"), "git-1"
    first = run_app(db, session, str(staged), "start")
    assert first["stop_reason"] == "interrupt"
    (pending,) = first["interrupts"]
    assert pending["tool_call"]["name"] == "git_commit"
    assert "MCP server 'mcp-server-git'" in pending["reason"]
    assert commits(staged) == ["first"]  # nothing ran while waiting
    second = run_app(db, session, str(staged), "resume", json.dumps({pending["id"]: True}))
    assert second["stop_reason"] == "end_turn"
    assert "Changes committed successfully" in second["text"]
    assert commits(staged) == ["add", "new.txt", "first"]


def test_a_denial_in_another_process_never_runs_the_write(staged, tmp_path):
    db, session = str(tmp_path / "tether.db"), "git-2"
    first = run_app(db, session, str(staged), "start")
    (pending,) = first["interrupts"]
    second = run_app(db, session, str(staged), "resume", json.dumps({pending["id"]: "deny"}))
    assert second["stop_reason"] == "end_turn"
    assert "Denied" in second["text"]
    assert commits(staged) == ["first"]
