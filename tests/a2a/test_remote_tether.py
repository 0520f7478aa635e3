"""RemoteAgent against tether's own A2A server (``tether serve --app a2a_app``): a
tether agent calling a tether agent, each under its own policy."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from a2a_serve import Served
from remote_agents import script

from tether import Agent
from tether.a2a import RemoteAgent
from tether.durable import SQLiteStore
from tether.models import ScriptedModel

SUPPORT = Path(__file__).parent.parent / "support"
CALLER = [sys.executable, str(SUPPORT / "remote_caller.py")]


def caller(server: Served, task: str, token: str, **options: Any) -> Agent:
    remote = RemoteAgent(server.url, token=server.tokens[token], name="remote")
    return Agent(model=ScriptedModel(script(task, tool="remote")), tools=[remote], **options)


def test_a_plain_task_completes_with_the_remote_agents_answer(server: Served) -> None:
    result = caller(server, "hello there", "caller")("greet them")
    assert result.stop_reason == "end_turn"
    assert result.text == "caller got (ok): hi: hello there"


def test_a_remote_question_is_asked_here_and_its_answer_finishes_the_remote_task(
    server: Served,
) -> None:
    agent = caller(server, "ask", "caller")
    first = agent("find out the colour")
    assert first.stop_reason == "interrupt"
    [asked] = first.interrupts
    assert asked.name.startswith("remote#c1/")
    assert "which colour?" in str(asked.reason)
    done = agent.resume({asked.id: "teal"})  # forwarded: the remote's own caller answers it
    assert done.stop_reason == "end_turn"
    assert done.text == "caller got (ok): done: teal"


def test_a_remote_approval_answered_here_runs_the_remote_tool_once(server: Served) -> None:
    before = len(server.lines())
    agent = caller(server, "append from-a-caller", "admin")  # admin: may approve there too
    first = agent("append it")
    assert first.stop_reason == "interrupt"
    [asked] = first.interrupts
    assert "append_line" in str(asked.reason)
    done = agent.resume({asked.id: True})
    assert done.stop_reason == "end_turn"
    assert done.text.startswith("caller got (ok): done:")
    assert server.lines()[before:] == ["from-a-caller"]


def test_an_invoke_token_cannot_approve_the_remote_tool_and_nothing_runs_there(
    server: Served,
) -> None:
    """The remote's policy holds against its caller: an approval needs approve:PATTERN
    there, so the forwarded answer is refused and the call is a tool error."""
    before = len(server.lines())
    agent = caller(server, "append not-allowed", "caller")
    first = agent("append it")
    [asked] = first.interrupts
    done = agent.resume({asked.id: True})
    assert done.stop_reason == "end_turn"
    assert done.text.startswith("caller got (error):")
    assert server.lines()[before:] == []


def _tasks(db: Path) -> int:
    async def count() -> int:
        store = SQLiteStore(db)
        try:
            return sum(1 for s in await store.list_sessions(limit=10_000) if "a2a" in s.metadata)
        finally:
            await store.close()

    return asyncio.run(count())


def test_a_caller_killed_while_the_remote_task_runs_reattaches_and_sends_once(
    server: Served, tmp_path: Path
) -> None:
    db = str(tmp_path / "caller.db")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in [str(SUPPORT), os.environ.get("PYTHONPATH")] if p),
        "TETHER_REMOTE_TOKEN": server.tokens["caller"],
    }
    before = _tasks(server.db)
    proc = subprocess.Popen(
        [*CALLER, db, server.url, "sleep 3", "start"], env=env, stdout=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 60
        while _tasks(server.db) == before:  # the remote task exists: the message was sent
            assert time.monotonic() < deadline
            assert proc.poll() is None
            time.sleep(0.05)
        time.sleep(0.3)  # the task id reaches the caller's journal
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    time.sleep(1.2)  # the caller's lease (1 s) expires
    done = subprocess.run(
        [*CALLER, db, server.url, "sleep 3", "resume", "{}"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["stop_reason"] == "end_turn", out
    assert out["text"].startswith("caller got (ok): done:"), out
    assert _tasks(server.db) == before + 1  # the remote saw one message: one task
