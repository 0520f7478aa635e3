"""resume.py: answers are checked before anything changes; only interrupted calls re-run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tether import Agent, AnswerError, SessionStateError, tool
from tether.control import BeforeToolCall, Confirm, InterventionHandler
from tether.durable import SQLiteStore
from tether.models import ScriptedModel

RAN: list[dict[str, Any]] = []


@tool
def transfer(to: str, amount: int) -> str:
    """Send money."""
    RAN.append({"to": to, "amount": amount})
    return f"sent {amount} to {to}"


class Ask(InterventionHandler):
    def before_tool_call(self, event: BeforeToolCall) -> Confirm:
        return Confirm(f"send {event.tool_call.arguments['amount']}?")


def turn(messages: list[Any], specs: list[Any]) -> Any:
    """Call transfer once; answer "done" once its result is in (any agent object)."""
    if messages[-1].role == "tool":
        return "done"
    return {"tool_calls": [{"name": "transfer", "args": {"to": "bob", "amount": 5}}]}


def asking(script: Any = turn, tools: list[Any] | None = None, **options: Any) -> Agent:
    """An agent whose ``tools`` (default: transfer) each ask first (Ask), scripted by ``script``."""
    tools = [transfer] if tools is None else tools
    return Agent(model=ScriptedModel(script), tools=tools, interventions=[Ask()], **options)


def make(**options: Any) -> Agent:
    RAN.clear()
    return asking(**options)


def test_resume_of_a_session_that_is_not_suspended_says_so() -> None:
    agent = Agent(model=ScriptedModel(["x"]))
    with pytest.raises(SessionStateError, match="is not suspended: there is nothing to resume"):
        agent.resume({})


def test_unknown_ids_list_what_is_pending() -> None:
    agent = make()
    iid = agent("pay").interrupts[0].id
    with pytest.raises(AnswerError) as info:
        agent.resume({"typo": "approve"})
    assert "unknown interrupt id(s) ['typo']" in str(info.value)
    assert iid in str(info.value)


def test_edited_arguments_run_exactly_as_approved() -> None:
    agent = make()
    iid = agent("pay").interrupts[0].id
    result = agent.resume({iid: {"approved": True, "args": {"to": "bob", "amount": 7}}})
    assert result.text == "done"
    assert RAN == [{"to": "bob", "amount": 7}]


def test_a_denied_call_does_not_run() -> None:
    agent = make()
    iid = agent("pay").interrupts[0].id
    assert agent.resume({iid: "deny"}).text == "done"
    assert RAN == []
    assert agent.messages[2].tool_results[0].is_error


def test_resume_in_another_agent_object_continues_from_the_journal(tmp_path: Path) -> None:
    db = str(tmp_path / "t.db")
    first = make(store=SQLiteStore(db), session_id="pay-1")
    iid = first("pay").interrupts[0].id
    second = make(store=SQLiteStore(db), session_id="pay-1")
    assert second.resume({iid: "approve"}).text == "done"
    assert RAN == [{"to": "bob", "amount": 5}]
    with pytest.raises(SessionStateError):
        second.resume({iid: "approve"})


class RecordingStore(SQLiteStore):
    """A real SQLite store that notes each append: its kinds, whether it was fsync'd, and
    how many transfers had run when it committed."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.appends: list[tuple[list[str], bool, int]] = []

    async def append(self, *args: Any, **kwargs: Any) -> Any:
        written = await super().append(*args, **kwargs)
        kinds = [kind for kind, _ in args[2]]
        self.appends.append((kinds, bool(kwargs.get("durable")), len(RAN)))
        return written


def _suspend(db: str, tools: list[Any] | None = None) -> str:
    first = make(store=SQLiteStore(db), session_id="pay-1")
    if tools is not None:
        first = asking(tools=tools, store=SQLiteStore(db), session_id="pay-1")
    return first("pay").interrupts[0].id


def test_a_confirmed_call_commits_answer_and_intent_in_one_fsynced_transaction(
    tmp_path: Path,
) -> None:
    db = str(tmp_path / "t.db")
    iid = _suspend(db)
    store = RecordingStore(db)
    assert make(store=store, session_id="pay-1").resume({iid: "approve"}).text == "done"
    assert RAN == [{"to": "bob", "amount": 5}]
    before_the_transfer = [(kinds, durable) for kinds, durable, ran in store.appends if not ran]
    assert before_the_transfer == [(["interrupt_answered", "status", "tool_intent"], True)]
    assert [durable for _, durable, _ in store.appends].count(True) == 1


def test_an_idempotent_calls_resume_commits_the_answer_first_without_fsync(
    tmp_path: Path,
) -> None:
    @tool(name="transfer", idempotent=True)
    def put_limit(to: str, amount: int) -> str:
        """Set the limit (safe to repeat)."""
        RAN.append({"to": to, "amount": amount})
        return f"limit {amount} for {to}"

    db = str(tmp_path / "t.db")
    iid = _suspend(db, [put_limit])
    RAN.clear()
    store = RecordingStore(db)
    resumed = asking(tools=[put_limit], store=store, session_id="pay-1")
    assert resumed.resume({iid: "approve"}).text == "done"
    before = [kinds for kinds, _, ran in store.appends if not ran]
    assert before == [["interrupt_answered", "status", "tool_intent"]]
    assert [durable for _, durable, _ in store.appends] == [False] * len(store.appends)


def test_answers_given_while_others_stay_pending_are_fsynced(tmp_path: Path) -> None:
    def two(messages: list[Any], specs: list[Any]) -> Any:
        if messages[-1].role == "tool":
            return "done"
        calls = [{"name": "transfer", "args": {"to": to, "amount": 5}} for to in ("bob", "ann")]
        return {"tool_calls": calls}

    db = str(tmp_path / "t.db")
    RAN.clear()
    first = asking(two, store=SQLiteStore(db), session_id="pay-2")
    bob, ann = (i.id for i in first("pay both").interrupts)
    store = RecordingStore(db)
    again = asking(two, store=store, session_id="pay-2")
    assert again.resume({bob: "approve"}).stop_reason == "interrupt"
    # targeted resume: the answered call runs now; its answer is fsync'd with its intent
    assert RAN == [{"to": "bob", "amount": 5}]
    before_the_transfer = [(kinds, durable) for kinds, durable, ran in store.appends if not ran]
    assert before_the_transfer == [(["interrupt_answered", "status", "tool_intent"], True)]
    later = asking(two, store=SQLiteStore(db), session_id="pay-2")
    assert later.resume({ann: "approve"}).text == "done"
    assert RAN == [{"to": "bob", "amount": 5}, {"to": "ann", "amount": 5}]


async def test_a_resume_abandoned_before_its_first_write_still_saves_the_answer(
    tmp_path: Path,
) -> None:
    db = str(tmp_path / "t.db")
    iid = _suspend(db)
    store = RecordingStore(db)
    abandoned = make(store=store, session_id="pay-1")
    stream = abandoned.resume_stream({iid: "approve"})
    async for event in stream:
        assert type(event).__name__ == "ToolStarted"
        break  # the caller walks away before the tool's intent is written
    await stream.aclose()
    assert RAN == []
    assert [kinds for kinds, _, _ in store.appends] == [["interrupt_answered"]]
    again = make(store=SQLiteStore(db), session_id="pay-1")
    assert (await again.resume_async()).text == "done"  # no answer needed again
    assert RAN == [{"to": "bob", "amount": 5}]


def test_an_answer_from_another_session_of_the_same_shape_is_refused(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "two.db")
    first = make(store=store, session_id="shape-a")
    second = asking(store=SQLiteStore(tmp_path / "two.db"), session_id="shape-b")
    [theirs] = first("pay").interrupts
    [ours] = second("pay").interrupts
    assert theirs.id != ours.id
    with pytest.raises(AnswerError, match=r"unknown interrupt id\(s\)"):
        second.resume({theirs.id: True})
    assert second.pending_interrupts == [ours]
    assert RAN == []
    assert second.resume({ours.id: True}).text == "done"
    assert RAN == [{"to": "bob", "amount": 5}]
    first.close()
    second.close()


async def test_a_journal_from_before_session_bound_ids_resumes_with_its_old_ids(
    tmp_path: Path,
) -> None:
    """A journal whose interrupt ids do not name the session (written before they did)
    still resumes: the re-run finds the answer under the old id and asks nothing again."""
    from tether.control.interrupts import interrupt_id

    store = SQLiteStore(tmp_path / "old.db")
    source = make(store=store, session_id="old-src")
    [new] = (await source.invoke_async("pay")).interrupts
    source.close()
    call = new.tool_call
    position = next(
        p for p in range(50) if interrupt_id(new.point, p, call.id, new.name, "old-src") == new.id
    )
    old_id = interrupt_id(new.point, position, call.id, new.name)  # the pre-binding id
    record = await store.load("old-src")
    await store.create("old")
    entries = [
        (e.kind, json.loads(json.dumps(e.data).replace(new.id, old_id))) for e in record.entries
    ]
    await store.append("old", 0, entries, status="suspended")
    from tether.session import fold

    assert [i.id for i in fold(await store.load("old")).interrupts] == [old_id]
    resumed = asking(store=store, session_id="old")
    done = await resumed.resume_async({old_id: True})
    assert done.stop_reason == "end_turn"
    assert RAN == [{"to": "bob", "amount": 5}]
    resumed.close()
    await store.close()


# -- every way a resume ends runs AfterInvocation (issue 21) ----------------------------


def _seen(agent: Agent) -> list[tuple[str, list[str]]]:
    from tether.control import AfterInvocation

    seen: list[tuple[str, list[str]]] = []

    @agent.on(AfterInvocation)
    def record(event: AfterInvocation) -> None:
        seen.append((event.result.stop_reason, [i.id for i in event.result.interrupts]))

    return seen


def test_a_resume_that_still_waits_for_answers_runs_after_invocation(tmp_path: Path) -> None:
    def two(messages: list[Any], specs: list[Any]) -> Any:
        if messages[-1].role == "tool":
            return "done"
        calls = [{"name": "transfer", "args": {"to": to, "amount": 5}} for to in ("bob", "ann")]
        return {"tool_calls": calls}

    db = str(tmp_path / "t.db")
    RAN.clear()
    bob, ann = (i.id for i in asking(two, store=SQLiteStore(db), session_id="w")("pay").interrupts)
    again = asking(two, store=SQLiteStore(db), session_id="w")
    seen = _seen(again)
    result = again.resume({bob: "approve"})  # targeted resume: bob's call runs, ann waits
    assert (result.stop_reason, [i.id for i in result.interrupts]) == ("interrupt", [ann])
    assert seen == [("interrupt", [ann])]
    assert again.last_result is result
    assert RAN == [{"to": "bob", "amount": 5}]
    waiting = again.resume({})  # answers nothing: nothing runs, and it still ends once
    assert (waiting.stop_reason, [i.id for i in waiting.interrupts]) == ("interrupt", [ann])
    assert seen == [("interrupt", [ann]), ("interrupt", [ann])]
    assert again.last_result is waiting
    assert RAN == [{"to": "bob", "amount": 5}]


DIES_AFTER_THE_ANSWER = """
import os, sys
from tether import Agent
from tether.control import AfterMessageAdded
from tether.durable import SQLiteStore
from tether.models import ScriptedModel
agent = Agent(model=ScriptedModel(["the answer"]), store=SQLiteStore(sys.argv[1]), session_id="r")

@agent.on(AfterMessageAdded)
async def die(event):
    if event.message.role == "assistant":
        # a write commits the queued answer (as any record written mid-run would); then
        # the process dies before the run's end is journaled
        await event.agent.conversation.run.journal.flush()
        os._exit(9)

agent("question")
"""


def test_a_recovered_run_that_had_ended_runs_after_invocation(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    db = str(tmp_path / "t.db")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    died = subprocess.run(
        [sys.executable, "-c", DIES_AFTER_THE_ANSWER, db], env=env, timeout=60, check=False
    )
    assert died.returncode == 9
    recovered = Agent(model=ScriptedModel([]), store=SQLiteStore(db), session_id="r")
    seen = _seen(recovered)
    result = recovered.resume()  # the model is not called again: it has no turns left
    assert (result.stop_reason, result.text) == ("end_turn", "the answer")
    assert seen == [("end_turn", [])]
