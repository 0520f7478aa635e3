"""``replay_session``: a converging agent is answered from the journal and runs nothing, a
diverging one runs nothing (unless live tools), recorded interrupts get their recorded
answers, verdicts that changed are reported, and the diff is redacted; on every store."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import replay_app as ra

from tether.control import ToolMiddleware
from tether.control.middleware import ToolRequest
from tether.durable import MemoryStore, Store
from tether.evals.replay import replay_session
from tether.evals.replay_diff import ReplayDiff
from tether.evals.replay_record import read_recording
from tether.evals.replay_tools import NOT_RECORDED


@pytest.fixture
def log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "log.txt"
    monkeypatch.setenv(ra.LOG_ENV, str(path))
    return path


def raw(path: Path) -> bytes:
    return path.read_bytes() if path.exists() else b""


def text(path: Path) -> str:
    return raw(path).decode()


async def record(store: Store, sid: str, *prompts: str, answer: Any = "approve") -> None:
    """A real session of the recorded agent; every interrupt gets ``answer``."""
    agent = ra.make_agent(store=store, session_id=sid)
    for prompt in prompts:
        result = await agent.invoke_async(prompt)
        while result.stop_reason == "interrupt":
            result = await agent.resume_async({i.id: answer for i in result.interrupts})


async def replayed(store: Store, sid: str, make: Callable[..., Any], **options: Any) -> ReplayDiff:
    recording = await read_recording(store, sid)
    assert recording is not None
    return await replay_session(recording, make(), store, **options)


async def journal(store: Store, sid: str) -> list[tuple[int, str, Any]]:
    return [(e.seq, e.kind, e.data) for e in await store.read_entries(sid, 0)]


async def test_a_converging_agent_is_answered_from_the_journal_and_runs_nothing(
    stores: Callable[[], Store], log: Path
) -> None:
    store = stores()
    await record(store, "rec", "note alpha", "note beta")
    before, entries = raw(log), await journal(store, "rec")
    assert before == b"alpha\nbeta\n"
    diff = await replayed(store, "rec", ra.make_agent)
    assert diff.converged, diff.to_dict()
    assert raw(log) == before  # the recorded results answered: nothing ran
    assert [(r.kind, r.tool, r.answered, r.then, r.now) for r in diff.calls] == [
        ("same", "append", "journal", "proceed", "proceed"),
        ("same", "append", "journal", "proceed", "proceed"),
    ]
    assert [(a.then, a.now) for a in diff.answers] == [
        ("done: appended alpha", "done: appended alpha"),
        ("done: appended beta", "done: appended beta"),
    ]
    assert await journal(store, "rec") == entries  # the recording is untouched
    kinds = [kind for _, kind, _ in await journal(store, diff.replay_session_id)]
    assert "tool_intent" not in kinds  # the replay's journal: no tool ran
    assert await read_recording(store, "missing") is None
    assert kinds.count("message") == 8  # 2 turns: user, call, result, answer


async def test_a_diverging_call_is_not_run_and_gets_a_tool_error(
    stores: Callable[[], Store], log: Path
) -> None:
    store = stores()
    await record(store, "rec", "note alpha")
    before = raw(log)
    diff = await replayed(store, "rec", ra.loud)
    assert raw(log) == before  # append(ALPHA) has no recorded result: not run
    assert not diff.converged
    [row] = diff.calls
    assert (row.kind, row.then_arguments, row.now_arguments, row.answered) == (
        "changed", {"line": "alpha"}, {"line": "ALPHA"}, "not run",
    )  # fmt: skip
    assert row.now_status == "error"
    [answer] = diff.answers
    assert answer.changed
    assert answer.now == "done: " + NOT_RECORDED.format(tool="append")
    assert diff.to_dict()["changed"] == 1


async def test_with_live_tools_a_diverging_call_runs(
    stores: Callable[[], Store], log: Path
) -> None:
    store = stores()
    await record(store, "rec", "note alpha", "note beta")
    diff = await replayed(store, "rec", ra.loud, live_tools=True)
    assert text(log) == "alpha\nbeta\nALPHA\nBETA\n"
    assert [(r.answered, r.now_status) for r in diff.calls] == [("live", "ok"), ("live", "ok")]
    assert [a.now for a in diff.answers] == ["done: appended ALPHA", "done: appended BETA"]


async def test_a_recorded_interrupt_is_answered_with_the_recorded_answer(
    stores: Callable[[], Store], log: Path
) -> None:
    store = stores()
    await record(store, "rec", "send bob")
    await record(store, "refused", "send eve", answer="deny")
    assert text(log) == "sent to bob\n"
    approved = await replayed(store, "rec", ra.make_agent)
    assert approved.converged, approved.to_dict()
    [row] = approved.calls
    assert (row.then, row.now, row.answered, row.now_status) == (
        "confirm",
        "confirm",
        "journal",
        "ok",
    )
    answered = [d for _, k, d in await journal(store, approved.replay_session_id)
                if k == "interrupt_answered"]  # fmt: skip
    assert [list(d["answers"].values()) for d in answered] == [["approve"]]
    refused = await replayed(store, "refused", ra.make_agent)
    assert refused.converged, refused.to_dict()
    assert [(r.now, r.now_status, r.answered) for r in refused.calls] == [("confirm", "denied", "")]
    assert text(log) == "sent to bob\n"


async def test_an_interrupt_the_recording_never_answered_stops_the_turn(
    log: Path,
) -> None:
    store = MemoryStore()
    await record(store, "rec", "note alpha")
    recording = await read_recording(store, "rec")
    assert recording is not None
    recording.turns[0].prompt[0] = type(recording.turns[0].prompt[0]).user("send mallory")
    diff = await replay_session(recording, ra.make_agent(), store)
    assert not diff.converged
    assert diff.notes == [
        "turn 1: the interrupt 'confirm:AskBeforeSend' has no recorded answer; "
        "the replay of this turn stopped there"
    ]
    assert diff.answers[0].stop == "interrupt"
    assert not text(log).count("mallory")


async def test_a_new_deny_rule_is_a_changed_verdict(stores: Callable[[], Store], log: Path) -> None:
    store = stores()
    await record(store, "rec", "note alpha")
    diff = await replayed(store, "rec", ra.no_append)
    [row] = diff.calls
    assert (row.kind, row.then, row.now, row.now_status) == ("same", "proceed", "deny", "denied")
    assert row.verdict_changed
    assert diff.verdicts_changed == [row]
    assert not diff.converged
    assert text(log) == "alpha\n"


async def test_a_call_denied_then_and_allowed_now_is_not_run(log: Path) -> None:
    store = MemoryStore()
    agent = ra.no_append(store=store, session_id="rec")
    await agent.invoke_async("note alpha")  # denied: nothing ran then
    assert raw(log) == b""
    diff = await replayed(store, "rec", ra.make_agent)
    [row] = diff.calls
    assert (row.then, row.now, row.answered, row.now_status) == (
        "deny",
        "proceed",
        "not run",
        "error",
    )
    assert raw(log) == b""  # the recording has no result for it: it is not run now either


async def test_an_extra_call_is_added_and_a_missing_one_removed(log: Path) -> None:
    from tether.models import ScriptedModel

    store = MemoryStore()
    await record(store, "rec", "note alpha", "note beta")
    calls = [{"name": "append", "args": {"line": "alpha"}}, {"name": "send", "args": {"to": "x"}}]
    model = ScriptedModel([{"tool_calls": calls}, "first", "second"])
    diff = await replay_session(
        (await read_recording(store, "rec")) or pytest.fail("no recording"),
        ra.make_agent().clone(model=model),
        store,
    )
    assert [(r.turn, r.kind, r.tool, r.answered) for r in diff.calls] == [
        (1, "same", "append", "journal"),
        (1, "added", "send", ""),  # asked first (a Confirm), and never answered then
        (2, "removed", "append", ""),
    ]
    assert diff.notes == [
        "turn 1: the interrupt 'confirm:AskBeforeSend' has no recorded answer; "
        "the replay of this turn stopped there",
        "turn 2 not replayed: the replay waits for an answer",
    ]
    assert [(a.then, a.now, a.stop) for a in diff.answers] == [
        ("done: appended alpha", None, "interrupt"),
        ("done: appended beta", None, None),
    ]
    assert text(log) == "alpha\nbeta\n"


class Lower(ToolMiddleware):
    """The agent's own tool middleware: it lower-cases every string argument."""

    async def input(self, request: ToolRequest) -> ToolRequest:
        call = request.call
        lowered = {k: v.lower() if isinstance(v, str) else v for k, v in call.arguments.items()}
        return dataclasses.replace(request, call=dataclasses.replace(call, arguments=lowered))


async def test_the_agents_middleware_runs_and_the_arguments_that_ran_are_matched(
    log: Path,
) -> None:
    store = MemoryStore()
    recorder = ra.loud(store=store, session_id="rec", middleware=[Lower()])
    await recorder.invoke_async("note alpha")  # the model asks ALPHA, alpha runs
    assert text(log) == "alpha\n"
    recording = await read_recording(store, "rec")
    assert recording is not None
    assert [(r.tool, r.arguments) for r in recording.runs] == [("append", {"line": "alpha"})]
    same = await replay_session(recording, ra.loud(middleware=[Lower()]), store)
    assert same.converged, same.to_dict()
    assert [(r.answered, r.then, r.now) for r in same.calls] == [
        ("journal", "transform", "transform")
    ]
    without = await replay_session(recording, ra.loud(), store)  # ALPHA would run now
    assert [(r.kind, r.answered, r.then, r.now) for r in without.calls] == [
        ("same", "not run", "transform", "proceed")
    ]
    assert not without.converged  # the answer changed: the call got the replay's tool error
    assert text(log) == "alpha\n"


async def test_the_same_arguments_after_coercion_are_the_same_call(log: Path) -> None:
    store = MemoryStore()
    await record(store, "rec", "count 3")  # the model gave n="3"; the tool ran with 3
    recording = await read_recording(store, "rec")
    assert recording is not None
    assert recording.calls[0].call.arguments == {"n": "3"}
    diff = await replay_session(recording, ra.loud(), store)  # this model gives n=3
    assert diff.converged, diff.to_dict()
    assert [r.answered for r in diff.calls] == ["journal"]
    assert text(log) == "counted 3\n"


async def test_a_recorded_secret_never_reaches_the_diff(log: Path) -> None:
    store = MemoryStore()
    secret = "hunter2-very-secret"
    await record(store, "rec", f"login ann {secret}")
    diff = await replayed(store, "rec", ra.loud)  # logs in as ANN: a changed call
    shown = json.dumps(diff.to_dict())
    assert secret not in shown
    [row] = diff.calls
    assert row.then_arguments == {"user": "ann", "password": "***"}
    assert row.now_arguments == {"user": "ANN", "password": "***"}
    assert "***" in diff.answers[0].prompt


async def test_the_agents_redactor_masks_the_diff(log: Path) -> None:
    store = MemoryStore()
    await record(store, "rec", "login ann-the-admin pw12345678")
    diff = await replayed(store, "rec", ra.redacting_loud)
    shown = json.dumps(diff.to_dict())
    assert "ann-the-admin" not in shown
    assert "ANN-THE-ADMIN" not in shown
    [row] = diff.calls
    assert row.then_arguments == row.now_arguments == {"user": "***", "password": "***"}
    assert diff.answers[0].prompt == "login *** ***"


async def test_the_replay_refuses_the_recorded_session_and_an_existing_one(log: Path) -> None:
    from tether.errors import ConfigurationError

    store = MemoryStore()
    await record(store, "rec", "note alpha")
    recording = await read_recording(store, "rec")
    assert recording is not None
    with pytest.raises(ConfigurationError, match="cannot run in the recorded session 'rec'"):
        await replay_session(recording, ra.make_agent(), store, session_id="rec")
    await record(store, "other", "note beta")
    with pytest.raises(ConfigurationError, match="session 'other' already exists"):
        await replay_session(recording, ra.make_agent(), store, session_id="other")
    recording.turns.clear()
    with pytest.raises(ConfigurationError, match="session 'rec' has no user turn to replay"):
        await replay_session(recording, ra.make_agent(), store)
    with pytest.raises(ConfigurationError, match="needs an Agent, got dict"):
        await replay_session(recording, {}, store)  # type: ignore[arg-type]
    assert await read_recording(store, "missing") is None
