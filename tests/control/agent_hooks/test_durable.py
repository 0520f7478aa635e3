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


# Non-ASCII keys and values, nesting and floats: the two JSON encodings once disagreed.
AWKWARD = {"city": "Zürich", "wo": {"straße": ["Ä", 1.5, {"x": -0.1}], "n": 3}, "ok": True}


def _awkward_agent(db: Path, ran: list[dict[str, Any]], resolver: Any = None) -> Any:
    from escalation_app import ApproveTransfers

    from tether import Agent, tool
    from tether.control.agent_hooks import AgentHooksHost, DurableApprovals
    from tether.models import ScriptedModel

    @tool
    def transfer(city: str, wo: dict[str, Any], ok: bool) -> str:
        """Move money."""
        ran.append({"city": city, "wo": wo, "ok": ok})
        return "moved"

    def script(messages: list[Any], tools: list[dict[str, Any]]) -> dict[str, Any]:
        if messages[-1].role == "tool":
            return {"text": "result: " + messages[-1].tool_results[0].content}
        return {"tool_calls": [{"id": "call-1", "name": "transfer", "args": AWKWARD}]}

    return Agent(
        model=ScriptedModel(script),
        tools=[transfer],
        agent_hooks=AgentHooksHost(
            [ApproveTransfers()], approval_resolver=resolver or DurableApprovals()
        ),
        store=SQLiteStore(db),
        session_id="s1",
    )


def test_the_digest_the_cli_prints_is_accepted_by_the_escalation(tmp_path: Path) -> None:
    from ops_cli import cli

    from tether.durable import args_sha256

    db = tmp_path / "s.db"
    ran: list[dict[str, Any]] = []
    first = _awkward_agent(db, ran)("send")
    [pending] = first.interrupts
    assert pending.reason["args_sha256"] == args_sha256(AWKWARD) == args_hash(AWKWARD)
    [row] = asyncio.run(SQLiteStore(db).approvals.pending())
    shown = cli("approvals", "show", row.id, "--store", str(db))
    assert shown.exit_code == 0
    [line] = [ln for ln in shown.stdout.splitlines() if "args sha256" in ln]
    printed = line.split()[-1]
    assert printed == args_sha256(AWKWARD)
    answer = {"approved": True, "args_sha256": printed}
    done = _awkward_agent(db, ran).resume({pending.id: answer})
    assert done.text == "result: moved"
    assert ran == [AWKWARD]


class _ResolverBeforeTheChange:
    """What DurableApprovals did before it shared args_sha256 (the writer of old journals):
    the interrupt named and the question hashed with ASCII-escaped JSON."""

    def resolve(self, request: Any) -> Any:
        from agent_hooks import ApprovalOutcome, ApprovalResolution

        from tether.control.agent_hooks.durable import CURRENT_EVENT, INTERRUPT_PREFIX

        call = CURRENT_EVENT.get().tool_call  # type: ignore[union-attr]
        digest = _old_hash(dict(call.arguments))
        question = {"tool_call_id": call.id, "tool": call.name, "args_sha256": digest}
        CURRENT_EVENT.get().interrupt(f"{INTERRUPT_PREFIX}:{call.id}:{digest[:16]}", question)  # type: ignore[union-attr]
        return ApprovalResolution(ApprovalOutcome.UNRESOLVED, request.context_identity)


def _old_hash(arguments: dict[str, Any]) -> str:
    import hashlib

    text = json.dumps(arguments, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


def test_a_session_suspended_under_the_legacy_hash_still_resumes(tmp_path: Path) -> None:
    """A question journaled before escalations shared args_sha256 (non-ASCII arguments):
    its answer, naming the digest the question carried, runs the call once."""
    assert _old_hash(AWKWARD) != args_hash(AWKWARD)  # the case the old encoding got wrong
    db = tmp_path / "s.db"
    ran: list[dict[str, Any]] = []
    old = _awkward_agent(db, ran, _ResolverBeforeTheChange())
    [pending] = old("send").interrupts
    assert pending.reason["args_sha256"] == _old_hash(AWKWARD)
    answer = {"approved": True, "args_sha256": pending.reason["args_sha256"]}
    done = _awkward_agent(db, ran).resume({pending.id: answer})
    assert done.stop_reason == "end_turn"
    assert done.text == "result: moved"
    assert ran == [AWKWARD]
