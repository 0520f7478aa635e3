"""Durable escalation: an escalate suspends the session; another process answers it."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tether.control.agent_hooks import args_hash
from tether.durable import SQLiteStore

APP = Path(__file__).resolve().parents[2] / "support" / "escalation_app.py"


def app(db: Path, mode: str, answers: dict[str, Any] | None = None) -> dict[str, Any]:
    args = [sys.executable, str(APP), str(db), "s1", mode]
    if answers is not None:
        args.append(json.dumps(answers))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run(args, capture_output=True, text=True, timeout=60, check=False, env=env)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def effects(db: Path) -> list[str]:
    path = Path(str(db) + ".effects")
    return path.read_text().split() if path.exists() else []


def start(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    db = tmp_path / "s.db"
    first = app(db, "start")
    assert first["stop_reason"] == "interrupt"
    [pending] = first["interrupts"]
    assert pending["reason"]["tool_call_id"] == "call-1"
    assert pending["reason"]["args_sha256"] == args_hash({"amount": 100})
    assert pending["reason"]["reason"] == "policy:needs-approval"
    assert effects(db) == []
    return db, pending


def test_an_approval_given_in_another_process_runs_the_tool_once(tmp_path: Path) -> None:
    db, pending = start(tmp_path)
    done = app(db, "resume", {pending["id"]: "approve"})
    assert done["stop_reason"] == "end_turn"
    assert done["text"] == "result: moved 100"
    assert effects(db) == ["100"]
    entries = asyncio.run(SQLiteStore(str(db)).read_entries("s1", 0))
    audit = [e.data["agent_hooks"] for e in entries if e.kind == "audit"]
    approved = [r for r in audit if r.get("resolved_by") == "approval"]
    assert len(approved) == 1
    assert approved[0]["interception_point"] == "pre_tool_call"


@pytest.mark.parametrize(
    "answer",
    [
        "deny",
        {"approved": True, "tool_call_id": "call-2"},
        {"approved": True, "args_sha256": "0" * 64},
        "maybe",
    ],
    ids=["rejected", "wrong-call", "other-arguments", "not-a-decision"],
)
def test_a_rejection_or_an_answer_for_another_call_keeps_the_tool_from_running(
    tmp_path: Path, answer: Any
) -> None:
    db, pending = start(tmp_path)
    done = app(db, "resume", {pending["id"]: answer})
    assert done["stop_reason"] == "end_turn"
    assert "Denied" in done["text"]
    assert effects(db) == []
