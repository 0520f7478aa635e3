"""Durable sessions through the real loop: journal, reload, resume across processes, recovery."""

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tether import Agent, PersistenceError, ToolContext, tool
from tether.control import BeforeToolCall
from tether.durable import MemoryStore, SessionBusy, SQLiteStore
from tether.models import ScriptedModel
from tether.session import SNAPSHOT_EVERY, fold

APP = Path(__file__).parent / "support" / "session_app.py"


def app(db: Path, session: str, mode: str, answers: dict[str, Any] | None = None) -> dict[str, Any]:
    args = [sys.executable, str(APP), str(db), session, mode]
    if answers is not None:
        args.append(json.dumps(answers))
    env = {**os.environ, "TETHER_TEST_CRASH": "1" if mode == "crash-in-tool" else "0"}
    out = subprocess.run(args, capture_output=True, text=True, timeout=60, check=False, env=env)
    if mode == "crash-in-tool":
        assert out.returncode == 9, out.stderr
        return {}
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def effects(db: Path) -> list[str]:
    path = Path(str(db) + ".effects")
    return path.read_text().splitlines() if path.exists() else []


@tool
def add(a: int, b: int) -> int:
    """Add."""
    return a + b


def adder(**kwargs: Any) -> Agent:
    def script(messages, tools):
        if messages[-1].role == "tool":
            return {"text": f"sum is {messages[-1].tool_results[0].content}"}
        return {"tool_calls": [{"name": "add", "args": {"a": 2, "b": len(messages)}}]}

    return Agent(model=ScriptedModel(script), tools=[add], **kwargs)


def test_a_fresh_agent_on_the_same_store_sees_the_whole_conversation(tmp_path):
    db = tmp_path / "s.db"
    first = adder(store=SQLiteStore(db), session_id="conv")
    first("one")
    first.state["k"] = [1, 2]
    first("two")
    second = adder(store=SQLiteStore(db), session_id="conv")
    result = second("three")
    assert result.text == "sum is 11"  # 8 earlier messages + the new prompt
    assert [m.to_dict() for m in second.messages[:8]] == [m.to_dict() for m in first.messages]
    assert second.state == {"k": [1, 2]}


def test_the_default_store_is_tether_db_in_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    agent = adder(session_id="here")
    agent("go")
    assert (tmp_path / "tether.db").exists()
    assert isinstance(agent.store, SQLiteStore)
    assert adder().store is None  # no session id: memory only


def test_resume_in_a_new_process_runs_the_approved_tool_exactly_once(tmp_path):
    db = tmp_path / "s.db"
    started = app(db, "s1", "start")
    assert started["stop_reason"] == "interrupt"
    [pending] = started["interrupts"]
    assert pending["name"] == "confirm:AskFirst"
    assert effects(db) == []
    done = app(db, "s1", "resume", {pending["id"]: "approve"})
    assert done["stop_reason"] == "end_turn"
    assert done["text"] == "done: recorded hello"
    assert effects(db) == ["hello"]
    # resuming again changes nothing: the session is no longer suspended
    again = subprocess.run(
        [sys.executable, str(APP), str(db), "s1", "resume", json.dumps({pending["id"]: True})],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert again.returncode != 0
    assert "is not suspended" in again.stderr
    assert effects(db) == ["hello"]


def test_a_crash_after_the_side_effect_leaves_the_call_in_doubt_not_repeated(tmp_path):
    db = tmp_path / "s.db"
    app(db, "s2", "crash-in-tool")
    assert effects(db) == ["hello"]
    recovered = app(db, "s2", "recover")  # resume() with no answers, in a new process
    assert recovered["stop_reason"] == "interrupt"
    [doubt] = recovered["interrupts"]
    assert doubt["source"] == "in_doubt"
    assert doubt["tool_call"]["name"] == "record"
    assert effects(db) == ["hello"]  # not re-run on its own
    done = app(db, "s2", "recover", {doubt["id"]: {"skip": "recorded hello (confirmed by ops)"}})
    assert done["stop_reason"] == "end_turn"
    assert done["text"] == "done: recorded hello (confirmed by ops)"
    assert effects(db) == ["hello"]


@pytest.mark.parametrize(
    ("answer", "lines", "stop"), [("retry", 2, "end_turn"), ("abort", 1, "cancelled")]
)
def test_in_doubt_answers_retry_and_abort(tmp_path, answer, lines, stop):
    db = tmp_path / "s.db"
    app(db, "s3", "crash-in-tool")
    doubt = app(db, "s3", "recover")["interrupts"][0]
    done = app(db, "s3", "recover", {doubt["id"]: answer})
    assert done["stop_reason"] == stop
    assert len(effects(db)) == lines


def crashed_session(store: Any, session: str, **tool_options: Any) -> list[str]:
    """Journal a run whose tool started (intent saved) and whose process then died."""
    runs: list[str] = []

    @tool(name="effect", **tool_options)
    def effect(ctx: ToolContext) -> str:
        """A side effect."""
        runs.append("ran")
        raise SystemExit  # simulate the process dying mid-tool (BaseException escapes)

    agent = Agent(
        model=ScriptedModel([{"tool_calls": [{"name": "effect", "args": {}}]}, "finished"]),
        tools=[effect],
        store=store,
        session_id=session,
    )
    with pytest.raises(SystemExit):
        agent("go")
    return runs


def test_idempotent_tools_rerun_after_a_crash_and_reconcile_decides(tmp_path):
    db = tmp_path / "s.db"
    crashed_session(SQLiteStore(db), "idem", idempotent=True)
    reran: list[str] = []

    @tool(name="effect", idempotent=True)
    def effect_again() -> str:
        """Safe to repeat."""
        reran.append("again")
        return "ok"

    agent = Agent(
        model=ScriptedModel(["finished"]),
        tools=[effect_again],
        store=SQLiteStore(db),
        session_id="idem",
    )
    assert agent.resume().stop_reason == "end_turn"
    assert reran == ["again"]

    crashed_session(SQLiteStore(db), "rec")

    @tool(name="effect", reconcile=lambda call: {"found": call.id})
    def effect_checked() -> str:
        """Has a reconcile function."""
        raise AssertionError("must not run: reconcile found the effect")

    agent = Agent(
        model=ScriptedModel(["finished"]),
        tools=[effect_checked],
        store=SQLiteStore(db),
        session_id="rec",
    )
    assert agent.resume().stop_reason == "end_turn"
    assert json.loads(agent.messages[2].tool_results[0].content) == {
        "found": agent.messages[1].tool_calls[0].id
    }


def test_a_second_process_gets_session_busy_while_the_first_runs(tmp_path):
    db = tmp_path / "s.db"
    release = asyncio.Event()
    entered = asyncio.Event()

    @tool
    async def hold() -> str:
        """Holds the session."""
        entered.set()
        await release.wait()
        return "released"

    async def scenario() -> None:
        first = Agent(
            model=ScriptedModel([{"tool_calls": [{"name": "hold", "args": {}}]}, "ok"]),
            tools=[hold],
            store=SQLiteStore(db),
            session_id="busy",
        )
        task = asyncio.ensure_future(first.invoke_async("go"))
        await asyncio.wait_for(entered.wait(), 10)
        probe = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, str(APP), str(db), "busy", "start"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert probe.returncode != 0
        assert "SessionBusy" in probe.stderr
        assert "busy" in probe.stderr
        release.set()
        assert (await task).text == "ok"

    asyncio.run(scenario())


async def test_two_agents_of_one_process_cannot_run_a_session_at_once():
    store = MemoryStore()
    first = adder(store=store, session_id="m")
    second = adder(store=store, session_id="m")
    entered = asyncio.Event()
    release = asyncio.Event()

    @first.on(BeforeToolCall)
    async def hold(event: BeforeToolCall) -> None:
        entered.set()
        await release.wait()

    task = asyncio.ensure_future(first.invoke_async("go"))
    await asyncio.wait_for(entered.wait(), 5)
    with pytest.raises(SessionBusy, match="another Agent in this process"):
        await second.invoke_async("go")
    assert second.messages == []
    release.set()
    assert (await task).stop_reason == "end_turn"


class FailingStore(MemoryStore):
    """A MemoryStore whose appends start failing after ``ok`` successful ones."""

    def __init__(self, ok: int) -> None:
        super().__init__()
        self.ok = ok

    async def append(self, *args: Any, **kwargs: Any) -> Any:
        if self.ok <= 0:
            from tether.durable import StoreUnavailable

            raise StoreUnavailable("the database went away (injected)")
        self.ok -= 1
        return await super().append(*args, **kwargs)


async def test_a_store_failure_mid_run_is_a_clear_error_and_keeps_what_was_saved():
    store = FailingStore(ok=1)  # the first commit: status, prompt, reply and tool intent
    agent = adder(store=store, session_id="f")
    with pytest.raises(PersistenceError) as info:
        await agent.invoke_async("go")
    text = str(info.value)
    assert "session f: could not save the journal entry" in text
    assert "went away" in text
    assert info.value.result is not None
    assert info.value.result.stop_reason == "error"
    saved = await store.read_entries("f")
    assert [e.kind for e in saved] == ["status", "message", "message", "tool_intent"]
    assert "(message)" in text  # the commit that failed: the tool message with the result


async def test_unserializable_state_is_rejected_with_its_path():
    agent = adder(store=MemoryStore(), session_id="bad")

    @agent.on(BeforeToolCall)
    def poison(event: BeforeToolCall) -> None:
        event.agent.state["when"] = {"at": object()}

    with pytest.raises(PersistenceError, match=r"\$\.data\.state\.when\.at"):
        await agent.invoke_async("go")


async def test_snapshots_keep_loading_equal_to_the_full_fold():
    store = MemoryStore()
    agent = adder(store=store, session_id="long")
    await agent.invoke_async("first")
    while (await store.load("long")).snapshot is None:  # type: ignore[union-attr]
        await agent.invoke_async("again")
    record = await store.load("long")
    assert record is not None
    assert len(record.entries) < SNAPSHOT_EVERY
    fresh = adder(store=store, session_id="long")
    await fresh.invoke_async("one more")
    assert [m.to_dict() for m in fresh.messages[: len(agent.messages)]] == [
        m.to_dict() for m in agent.messages
    ]


async def test_a_growing_state_is_journaled_as_deltas_and_folds_back():
    @tool
    def note(ctx: ToolContext) -> str:
        """Grows the session log."""
        ctx.state["log"] = ctx.state.get("log", "") + "x" * 200
        ctx.state["count"] = ctx.state.get("count", 0) + 1
        return "noted"

    def script(messages, tools):
        if messages[-1].role == "tool":
            return "ok"
        return {"tool_calls": [{"name": "note", "args": {}}]}

    store = MemoryStore()
    agent = Agent(model=ScriptedModel(script), tools=[note], store=store, session_id="grow")
    for _ in range(5):
        await agent.invoke_async("again")
    states = [e.data for e in await store.read_entries("grow") if e.kind == "state"]
    assert "state" in states[0]
    assert all("delta" in s for s in states[1:])
    assert states[-1]["delta"] == {"extend": {"log": "x" * 200}, "set": {"count": 5}}
    fresh = Agent(model=ScriptedModel(script), tools=[note], store=store, session_id="grow")
    await fresh.invoke_async("one more")
    assert fresh.state == {"log": "x" * 1200, "count": 6}


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_a_snapshot_does_not_copy_the_conversation(tmp_path, kind):
    store = MemoryStore() if kind == "memory" else SQLiteStore(tmp_path / "s.db")
    agent = adder(store=store, session_id="long")
    await agent.invoke_async("first")
    agent.state["k"] = "v"
    record = await store.load("long")
    assert record is not None
    while not record.earlier_snapshots:  # two snapshots
        for _ in range(25):
            await agent.invoke_async("again")
        record = await store.load("long")
        assert record is not None
    assert record.snapshot is not None
    # a snapshot holds the messages since the one before it, not the whole conversation
    first, latest = record.earlier_snapshots[0].data, record.snapshot.data
    assert latest["messages_from"] == first["message_count"] > 0
    assert len(latest["messages"]) == latest["message_count"] - first["message_count"]
    assert len(json.dumps(latest)) < 1.2 * len(json.dumps(first))
    fresh = adder(store=store, session_id="long")
    await fresh.invoke_async("one more")
    assert [m.to_dict() for m in fresh.messages[: len(agent.messages)]] == [
        m.to_dict() for m in agent.messages
    ]
    assert fresh.state == {"k": "v"}


async def test_a_snapshot_that_holds_the_messages_still_loads(tmp_path):
    """Snapshots written before they became incremental repeat the messages."""
    store = SQLiteStore(tmp_path / "s.db")
    agent = adder(store=store, session_id="old")
    await agent.invoke_async("first")
    record = await store.load("old")
    assert record is not None
    view = fold(record)
    old = view.to_snapshot()
    del old["message_count"], old["messages_from"]
    await store.append("old", record.version, [("snapshot", old)])
    fresh = adder(store=SQLiteStore(tmp_path / "s.db"), session_id="old")
    await fresh.invoke_async("second")
    assert [m.text for m in fresh.messages if m.role == "user"] == ["first", "second"]


@pytest.mark.parametrize(
    ("name", "home"),
    [
        ("IN_DOUBT", "tether.journal_fold"),
        ("SessionView", "tether.journal_fold"),
        ("fold", "tether.journal_fold"),
        ("SessionJournal", "tether.journal_writer"),
        ("SessionObserver", "tether.journal_writer"),
        ("SNAPSHOT_EVERY", "tether.journal_end"),
        ("journal_end", "tether.journal_end"),
        ("journal_suspend", "tether.journal_end"),
    ],
)
def test_every_journal_name_still_imports_from_tether_session(name: str, home: str) -> None:
    """session.py was split by concern; what it exported is the same object from there."""
    import importlib

    import tether.session

    assert getattr(tether.session, name) is getattr(importlib.import_module(home), name)
    assert name in tether.session.__all__
