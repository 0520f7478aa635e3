"""check_policy: a new policy over 1,000 recorded sessions (real runs into a SQLiteStore),
what it denies, confirms and transforms, filters, a corrupt row, and nothing written."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import policy_store as ps
import pytest
from policy_app import NoEtc

from tether import Agent, ToolContext, tool
from tether.control import (
    BeforeToolCall,
    Confirm,
    Deny,
    Guide,
    InterventionHandler,
    Transform,
)
from tether.control.agent_hooks import AgentHooksHost, DurableApprovals
from tether.control.audit import ApprovalPolicy
from tether.durable import SQLiteStore, Store
from tether.errors import ConfigurationError, InputError
from tether.evals.policy_check import PolicyReport, check_policy
from tether.messages import ToolCall
from tether.models import ScriptedModel

SESSIONS = 1000


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """1,000 sessions recorded by real runs (about 5 s on this machine), closed."""
    path = tmp_path_factory.mktemp("recorded") / "traffic.db"
    began = time.perf_counter()
    ps.build(path, SESSIONS)
    print(f"built {SESSIONS} sessions in {time.perf_counter() - began:.1f} s")
    return path


def fingerprint(path: Path) -> tuple[bytes, int, list[str]]:
    return path.read_bytes(), path.stat().st_mtime_ns, sorted(p.name for p in path.parent.iterdir())


async def check(path: Path, agent: Agent, **options: Any) -> PolicyReport:
    store = SQLiteStore(path, read_only=True)
    try:
        return await check_policy(store, agent, **options)
    finally:
        await store.close()


def checker(*handlers: InterventionHandler, **options: Any) -> Agent:
    return Agent(model=ScriptedModel([]), tools=ps.TOOLS, interventions=list(handlers), **options)


async def test_a_new_deny_rule_reports_exactly_the_calls_it_hits(recorded: Path) -> None:
    before = fingerprint(recorded)
    report = await check(recorded, checker(NoEtc()))
    hit = {
        (ps.session_id(i), f"d{i}") for i in range(SESSIONS) if i % 21 == 0
    }  # deletes under /etc/
    assert {(r.session_id, r.call_id) for r in report.rows} == hit
    assert all(r.now == "deny" and r.then == "proceed" and r.status == "ok" for r in report.rows)
    assert all(r.policies == ("NoEtc:Deny",) for r in report.rows)
    row = next(r for r in report.rows if r.session_id == "s-0021")
    assert row.reason == "denied by policy 'NoEtc': /etc/21.conf is under /etc/"
    assert row.arguments == {"path": "/etc/21.conf"}
    assert report.sessions == SESSIONS
    assert report.failures == []
    assert report.calls == len(ps.expected_calls(SESSIONS))
    assert report.now == {"deny": len(hit), "proceed": report.calls - len(hit)}
    assert report.then == {"proceed": report.calls}
    assert report.tools["delete_file"].now["deny"] == len(hit)
    assert report.tools["read_file"].now == {"proceed": SESSIONS}
    assert report.tools["delete_file"].changed == len(hit)
    assert report.changed == len(hit)
    assert fingerprint(recorded) == before  # bytes, mtime, no -wal/-shm: nothing written


class PinStaging(InterventionHandler):
    def before_tool_call(self, event: BeforeToolCall) -> Transform | None:
        if event.tool_call.name == "deploy":
            return Transform(lambda c: ToolCall(c.id, c.name, {**c.arguments, "env": "staging"}))
        return None


class AskBeforeDelete(InterventionHandler):
    def before_tool_call(self, event: BeforeToolCall) -> Confirm | None:
        if event.tool_call.name == "delete_file":
            return Confirm("delete it?")
        return None


class GuideReads(InterventionHandler):
    def before_tool_call(self, event: BeforeToolCall) -> Guide | None:
        if event.tool_call.arguments.get("path") == "/srv/3.txt":
            return Guide("read /srv/4.txt instead")
        return None


async def test_transform_confirm_and_guide_rules_without_asking_anyone(recorded: Path) -> None:
    asked: list[Any] = []
    agent = checker(PinStaging(), AskBeforeDelete(), GuideReads(), confirm=asked.append)
    report = await check(recorded, agent, session_glob="s-00[0-2]?")
    by_call = {r.call_id: r for r in report.rows}
    deploy = by_call["p5"]
    assert deploy.now == "transform"
    assert deploy.policies == ("PinStaging:Transform",)
    assert deploy.rewritten == {"env": "staging", "token": "***"}  # redacted like every view
    assert deploy.arguments == {"env": "prod", "token": "***"}
    assert "sk-secret" not in json.dumps(report.to_dict())
    assert "PinStaging" in deploy.reason
    delete = by_call["d7"]
    assert delete.now == "confirm"
    assert delete.reason == "asks: confirm:AskBeforeDelete (delete it?)"
    assert by_call["r3"].now == "guide"
    assert "read /srv/4.txt instead" in by_call["r3"].reason
    assert asked == []  # a Confirm is reported, never asked: the confirm callback is not called
    deletes = [i for i in range(30) if i % 7 == 0]
    deploys = [i for i in range(30) if i % 5 == 0]
    assert report.now == {
        "confirm": len(deletes),
        "transform": len(deploys),
        "guide": 1,
        "proceed": 30 - 1,
    }


async def test_the_session_glob_and_since_choose_the_calls(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    store = SQLiteStore(path)
    for index in range(0, 6):
        ps.record(store, index)
    await asyncio.sleep(0.05)
    boundary = time.time()
    for index in range(6, 12):
        ps.record(store, index)
    await store.close()
    agent = checker(NoEtc())
    later = await check(path, agent, since=boundary)
    assert {r.session_id for r in later.rows} == set()
    assert later.sessions == 6
    assert later.calls == len([c for c in ps.expected_calls(12) if c[0] >= "s-0006"])
    glob = await check(path, agent, session_glob="s-000[0-2]")
    assert glob.sessions == 3
    assert {r.call_id for r in glob.rows} == {"d0"}
    none = await check(path, agent, since=datetime.now(UTC))
    assert none.calls == 0
    assert none.sessions == 0


async def test_a_corrupt_journal_row_is_a_failure_row_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    store = SQLiteStore(path)
    for index in range(4):
        ps.record(store, index)
    await store.close()
    with sqlite3.connect(path) as conn:
        conn.execute(
            "UPDATE entries SET data = 'not json' WHERE session_id = 's-0002' AND seq = "
            "(SELECT min(seq) FROM entries WHERE session_id = 's-0002' AND kind = 'message')"
        )
    report = await check(path, checker(NoEtc()))
    [failure] = report.failures
    assert failure.session_id == "s-0002"
    assert "CorruptEntry" in failure.error
    assert report.sessions == 4
    assert report.calls == len([c for c in ps.expected_calls(4) if c[0] != "s-0002"])
    assert {r.call_id for r in report.rows} == {"d0"}


async def test_what_happened_then_comes_from_the_journal_and_the_audit(tmp_path: Path) -> None:
    """Traffic recorded under NoEtc (denied then, policy.verdict in the audit log), checked
    under no policy: the rows say what changed."""
    path = tmp_path / "t.db"
    store = SQLiteStore(path)
    for index in (0, 1, 21):
        ps.record(store, index, interventions=[NoEtc()])
    await store.close()
    report = await check(path, checker())
    assert {(r.call_id, r.then, r.status, r.now) for r in report.rows} == {
        ("d0", "deny", "denied", "proceed"),
        ("d21", "deny", "denied", "proceed"),
    }
    assert report.changed == 2


async def test_the_agents_own_store_gets_no_audit_record(recorded: Path, tmp_path: Path) -> None:
    """The factory's agent has a store (its audit trail would write policy.verdict records):
    the check leaves the audit trail out and writes nothing there either."""
    own = SQLiteStore(tmp_path / "own.db")
    agent = checker(NoEtc(), store=own, session_id="policy-check")
    report = await check(recorded, agent, session_glob="s-002?")
    assert {r.call_id for r in report.rows} == {"d21"}
    assert await own.audit.records() == []
    await own.close()


def deny_deploy(ctx: dict[str, Any]) -> dict[str, Any]:
    call = ctx.get("tool_call") or {}
    if ctx["interception_point"] == "pre_tool_call" and call.get("name") == "deploy":
        return {"decision": "deny", "reason": "p:no-deploys"}
    return {"decision": "allow"}


async def test_agent_hooks_interceptors_judge_the_recorded_calls(recorded: Path) -> None:
    records: list[Any] = []
    host = AgentHooksHost([deny_deploy], record_sink=records.append)
    agent = Agent(model=ScriptedModel([]), tools=ps.TOOLS, agent_hooks=host)
    report = await check(recorded, agent, session_glob="s-001?")
    assert {(r.call_id, r.now) for r in report.rows} == {("p10", "deny"), ("p15", "deny")}
    assert report.rows[0].reason.startswith("denied by AGENT-HOOKS at pre_tool_call: p:no-deploys")
    points = [r.interception_point.value for r in records]
    assert points.count("agent_startup") == points.count("agent_shutdown") == 10
    assert points.count("pre_tool_call") == report.calls


async def test_every_store_is_read_the_same(stores: Callable[[], Store]) -> None:
    writer = stores()
    for index in range(0, 22):
        await ps.record_async(writer, index)
    report = await check_policy(stores(), checker(NoEtc()))
    assert {r.call_id for r in report.rows} == {"d0", "d21"}
    assert report.calls == len(ps.expected_calls(22))
    assert report.sessions == 22


class Raises(InterventionHandler):
    def before_tool_call(self, event: BeforeToolCall) -> None:
        if event.tool_call.name == "deploy":
            raise RuntimeError("the policy broke")


class FromThePrompt(InterventionHandler):
    """Judges by the conversation the call was made in (the recorded user prompt)."""

    def before_tool_call(self, event: BeforeToolCall) -> Deny | None:
        first = event.agent.messages[0].content[0].text
        return Deny("task 3 reads nothing") if first == "task 3" else None


async def test_a_policy_that_raises_is_an_error_row_and_policies_see_the_conversation(
    recorded: Path,
) -> None:
    ran: list[str] = []

    @tool(name="read_file")
    def spy(path: str) -> str:
        """Would record a run."""
        ran.append(path)
        return ""

    agent = Agent(
        model=ScriptedModel([]),
        tools=[spy, *ps.TOOLS[1:]],
        interventions=[Raises(), FromThePrompt()],
    )
    report = await check(recorded, agent, session_glob="s-000?")
    by_call = {r.call_id: r for r in report.rows}
    assert by_call["p5"].now == "error"
    assert "RuntimeError" in by_call["p5"].reason
    assert "the policy broke" in by_call["p5"].reason
    assert by_call["r3"].now == "deny"
    assert set(by_call) == {"p0", "p5", "r3"}
    assert ran == []  # no tool runs


def escalate_deploys(ctx: dict[str, Any]) -> dict[str, Any]:
    call = ctx.get("tool_call") or {}
    if ctx["interception_point"] == "pre_tool_call" and call.get("name") == "deploy":
        return {"decision": "deny", "reason": "policy:needs-approval", "approval": {}}
    return {"decision": "allow"}


def deny_startup(ctx: dict[str, Any]) -> dict[str, Any]:
    if ctx["interception_point"] == "agent_startup":
        return {"decision": "deny", "reason": "p:closed"}
    return {"decision": "allow"}


async def test_an_escalate_is_a_confirm_and_a_denied_startup_denies_the_session(
    recorded: Path,
) -> None:
    host = AgentHooksHost([escalate_deploys], approval_resolver=DurableApprovals())
    agent = Agent(model=ScriptedModel([]), tools=ps.TOOLS, agent_hooks=host)
    report = await check(recorded, agent, session_glob="s-001?")
    assert {(r.call_id, r.now) for r in report.rows} == {("p10", "confirm"), ("p15", "confirm")}
    assert "agent-hooks:approval:p10" in report.rows[-1].reason + report.rows[0].reason
    closed = Agent(model=ScriptedModel([]), tools=ps.TOOLS, agent_hooks=[deny_startup])
    shut = await check(recorded, closed, session_glob="s-001?")
    assert shut.now == {"deny": shut.calls}
    assert shut.rows[0].reason == "denied by AGENT-HOOKS at agent_startup: p:closed"


async def test_a_confirm_ahead_of_a_deny_is_a_deny(recorded: Path) -> None:
    asked: list[Any] = []
    report = await check(
        recorded, checker(AskBeforeDelete(), NoEtc(), confirm=asked.append), session_glob="s-00??"
    )
    now = {r.call_id: r.now for r in report.rows if r.tool == "delete_file"}
    deletes = [i for i in range(100) if i % 7 == 0]
    assert now == {f"d{i}": "deny" if i % 21 == 0 else "confirm" for i in deletes}
    assert asked == []


async def test_the_agents_redactor_masks_the_rows(recorded: Path, tmp_path: Path) -> None:
    def hide_paths(tool_name: str | None, args: dict[str, Any]) -> dict[str, Any]:
        return {**args, "path": "[a path]"} if "path" in args else args

    own = SQLiteStore(tmp_path / "own.db")
    agent = checker(
        NoEtc(), store=own, session_id="policy-check", approvals=ApprovalPolicy(redactor=hide_paths)
    )
    report = await check(recorded, agent, session_glob="s-0021")
    [row] = report.rows
    assert row.arguments == {"path": "[a path]"}
    assert row.reason == "denied by policy 'NoEtc': *** is under /etc/"  # the path, scrubbed
    assert "/etc/21.conf" not in json.dumps(report.to_dict())
    await own.close()


async def test_a_glob_with_a_set_narrows_by_what_every_match_contains(recorded: Path) -> None:
    report = await check(recorded, checker(), session_glob="s-00[0123456789]1")
    assert report.sessions == 10  # s-0001, s-0011, ... s-0091
    assert (await check(recorded, checker(), session_glob="s-000[")).sessions == 0


async def test_bad_arguments_are_refused_naming_them(recorded: Path) -> None:
    store = SQLiteStore(recorded, read_only=True)
    try:
        with pytest.raises(ConfigurationError, match="agent must be an Agent, got str"):
            await check_policy(store, "myapp:make_agent")  # type: ignore[arg-type]
        with pytest.raises(InputError, match="since must be a datetime or epoch seconds, got str"):
            await check_policy(store, checker(), since="2025-01-01")  # type: ignore[arg-type]
        with pytest.raises(InputError, match="session_glob must be a string, got int"):
            await check_policy(store, checker(), session_glob=7)  # type: ignore[arg-type]
    finally:
        await store.close()


async def test_a_long_journal_is_read_in_chunks_to_its_end(tmp_path: Path) -> None:
    path = tmp_path / "long.db"
    store = SQLiteStore(path)
    turns: list[Any] = [
        {"tool_calls": [{"id": f"c{i}", "name": "delete_file", "args": {"path": f"/tmp/{i}"}}]}
        for i in range(199)
    ]
    turns.append(
        {"tool_calls": [{"id": "last", "name": "delete_file", "args": {"path": "/etc/x"}}]}
    )
    agent = Agent(
        model=ScriptedModel([*turns, "done"]),
        tools=ps.TOOLS,
        store=store,
        session_id="long",
        limits=None,
    )
    result = await agent.invoke_async("clean /tmp")
    assert result.stop_reason == "end_turn", result
    assert len(await store.read_entries("long")) > 500  # more than one chunk
    await store.close()
    report = await check(path, checker(NoEtc()))
    assert report.calls == 200
    assert [r.call_id for r in report.rows] == ["last"]


async def test_a_recorded_question_is_a_confirm_then(tmp_path: Path) -> None:
    path = tmp_path / "asked.db"
    store = SQLiteStore(path)
    agent = ps.recorder(store, 7, interventions=[AskBeforeDelete()])
    suspended = await agent.invoke_async("task 7")
    assert suspended.stop_reason == "interrupt"
    await store.close()
    report = await check(path, checker())
    [row] = report.rows
    assert (row.call_id, row.then, row.status, row.now) == ("d7", "confirm", "none", "proceed")


async def test_a_tool_asking_a_question_is_no_verdict(tmp_path: Path) -> None:
    path = tmp_path / "tool-asks.db"
    store = SQLiteStore(path)

    @tool(name="read_file")
    def asks(path: str, ctx: ToolContext) -> str:
        """Asks which file first."""
        return str(ctx.interrupt("which file?", path))

    agent = Agent(
        model=ScriptedModel([{"tool_calls": ps.session_calls(1)}, "done"]),
        tools=[asks],
        store=store,
        session_id="asks",
    )
    assert (await agent.invoke_async("read")).stop_reason == "interrupt"
    await store.close()
    report = await check(path, checker())
    assert report.then == {"proceed": 1}
    assert report.rows == []


class OddTransform(InterventionHandler):
    def before_tool_call(self, event: BeforeToolCall) -> Transform:
        return Transform(lambda c: ToolCall(c.id, c.name, {**c.arguments, "when": {1, 2}}))


async def test_a_transform_to_arguments_json_cannot_hold_is_shown_by_repr(recorded: Path) -> None:
    report = await check(recorded, checker(OddTransform()), session_glob="s-0001")
    [row] = report.rows
    assert row.now == "transform"
    assert row.rewritten == {"path": "/srv/1.txt", "when": "{1, 2}"}
    json.dumps(report.to_dict(), allow_nan=False)  # the --json form never fails
