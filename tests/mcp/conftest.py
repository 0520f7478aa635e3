"""MCP test fixtures: the reference servers from PyPI, the SDK-written fixture server, a git repo."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent
TIME_SERVER = str(BIN / "mcp-server-time")
GIT_SERVER = str(BIN / "mcp-server-git")
FIXTURE = str(Path(__file__).parents[1] / "support" / "mcp_fixture_server.py")


def fixture_args(mode: str = "stdio") -> list[str]:
    return [FIXTURE, mode]


def git(repo: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, timeout=30
    )
    return out.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with one commit and an untracked file ``new.txt``."""
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q")
    git(path, "config", "user.name", "tester")
    git(path, "config", "user.email", "tester@example.invalid")
    (path / "a.txt").write_text("a\n")
    git(path, "add", "a.txt")
    git(path, "commit", "-q", "-m", "first")
    (path / "new.txt").write_text("new\n")
    return path


@pytest.fixture
def start_http() -> Iterator[Callable[[], str]]:
    """Start the fixture server on 127.0.0.1 over streamable HTTP (or ``mode="sse"``:
    HTTP+SSE); returns its URL."""
    processes: list[subprocess.Popen[bytes]] = []

    def start(mode: str = "http") -> str:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        process = subprocess.Popen(
            [sys.executable, FIXTURE, mode, str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        processes.append(process)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"the fixture HTTP server exited with {process.returncode}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                return f"http://127.0.0.1:{port}/{'sse' if mode == 'sse' else 'mcp'}"
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("the fixture HTTP server did not start within 30 s")

    yield start
    for process in processes:
        process.kill()
        process.wait(10)
