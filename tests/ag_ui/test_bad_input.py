"""Refusals of ``POST /ag-ui``: each a clear HTTP error before anything runs, and nothing
lost (the thread still waits and a right answer still continues it)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from ag_ui_app import SECRET, post_run, run_input, user

from tether.ops.server.request_input import MAX_BODY


async def _suspended(served) -> list[str]:
    status, events = await asyncio.to_thread(
        post_run, served.url, served.tokens["caller"], run_input("pay-9", "r1", [user("pay")])
    )
    assert status == 200
    return [i.id for i in events[-1].outcome.interrupts]


async def _still_waiting(served, ids: list[str]) -> None:
    pending = await served.store().approvals.pending(session_id="pay-9")
    assert sorted(a.interrupt_id for a in pending) == sorted(ids)
    assert served.ran == []


@pytest.mark.parametrize(
    ("token", "status", "words"),
    [(None, 401, "bearer token is required"), ("viewer", 403, "needs the role invoke")],
)
async def test_callers_without_the_invoke_role_are_refused(served, token, status, words):
    given = None if token is None else served.tokens[token]
    code, body = await asyncio.to_thread(
        post_run, served.url, given, run_input("text-1", "r1", [user("hi")])
    )
    assert code == status
    assert words in body["error"]
    assert await served.store().load("text-1") is None


async def test_bad_bodies_are_refused_with_the_reason_and_nothing_is_lost(served):
    ids = await _suspended(served)
    token = served.tokens["boss"]
    cases = [
        (b"{not json", 400, "must be a JSON object"),
        ([1, 2], 400, "must be a JSON object"),
        ({"threadId": "pay-9", "runId": "r2"}, 400, "not a valid RunAgentInput"),
        (run_input("pay-9", "r2", [{"id": "m", "role": "wizard"}]), 400, "RunAgentInput"),
        (b'{"threadId": "' + b"x" * (MAX_BODY + 10) + b'"}', 413, "larger than"),
    ]
    for body, status, words in cases:
        code, answer = await asyncio.to_thread(post_run, served.url, token, body)
        assert code == status, answer
        assert words in answer["error"]
    await _still_waiting(served, ids)


async def test_a_validation_message_is_bounded(served):
    messages = [{"id": f"m{i}", "role": "wizard", "content": "x" * 50} for i in range(300)]
    code, answer = await asyncio.to_thread(
        post_run, served.url, served.tokens["caller"], run_input("text-2", "r1", messages)
    )
    assert code == 400
    assert len(answer["error"]) < 2200
    assert "errors)" in answer["error"]


@pytest.mark.parametrize("thread", ["..", "bad\x07id", "x" * 300])
async def test_a_thread_id_that_is_not_a_session_id_is_refused(served, thread):
    code, answer = await asyncio.to_thread(
        post_run, served.url, served.tokens["caller"], run_input(thread, "r1", [user("hi")])
    )
    assert code == 400
    assert "threadId is not a valid tether session id" in answer["error"]


async def test_resume_entries_for_unknown_interrupts_run_nothing(served):
    ids = await _suspended(served)
    resume = [
        {"interruptId": ids[0], "status": "resolved"},
        {"interruptId": "int_nope", "status": "resolved"},
    ]
    code, answer = await asyncio.to_thread(
        post_run, served.url, served.tokens["boss"], run_input("pay-9", "r2", [], resume=resume)
    )
    assert code == 400
    assert "'int_nope'" in answer["error"]
    await _still_waiting(served, ids)
    # on a thread that waits on nothing, too
    code, answer = await asyncio.to_thread(
        post_run,
        served.url,
        served.tokens["boss"],
        run_input(
            "text-3", "r1", [user("hi")], resume=[{"interruptId": "int_x", "status": "cancelled"}]
        ),
    )
    assert code == 400
    assert "'int_x'" in answer["error"]
    assert await served.store().load("text-3") is None
    # the right answer still continues the run
    resume = [{"interruptId": i, "status": "resolved"} for i in ids]
    code, events = await asyncio.to_thread(
        post_run, served.url, served.tokens["boss"], run_input("pay-9", "r3", [], resume=resume)
    )
    assert code == 200
    assert events[-1].result["text"] == "paid: sent 500 to bob + sent 9 to eve"


async def test_a_suspended_thread_needs_answers_before_a_new_turn(served):
    ids = await _suspended(served)
    code, answer = await asyncio.to_thread(
        post_run, served.url, served.tokens["caller"], run_input("pay-9", "r2", [user("more")])
    )
    assert code == 409
    assert "waits on 2 interrupt(s)" in answer["error"]
    await _still_waiting(served, ids)


async def test_a_run_needs_a_user_message_and_front_end_tools_their_own_names(served):
    token = served.tokens["caller"]
    code, answer = await asyncio.to_thread(
        post_run, served.url, token, run_input("text-4", "r1", [])
    )
    assert code == 400
    assert "nothing to run" in answer["error"]
    tools = [{"name": "note", "description": "mine"}]
    code, answer = await asyncio.to_thread(
        post_run, served.url, token, run_input("tools-4", "r1", [user("go")], tools=tools)
    )
    assert code == 400
    assert "one of the agent's own tools" in answer["error"]
    tools = [{"name": "bad name!", "description": "x"}]
    code, answer = await asyncio.to_thread(
        post_run, served.url, token, run_input("tools-4", "r1", [user("go")], tools=tools)
    )
    assert code == 400
    assert "is not valid" in answer["error"]
    assert await served.store().load("tools-4") is None


async def test_a_thread_is_its_owners(served):
    code, _ = await asyncio.to_thread(
        post_run, served.url, served.tokens["caller"], run_input("text-5", "r1", [user("Ann")])
    )
    assert code == 200
    before = await served.store().load("text-5")
    code, answer = await asyncio.to_thread(
        post_run, served.url, served.tokens["other"], run_input("text-5", "r2", [user("Bo")])
    )
    assert code == 403
    assert "was started by 'caller'" in answer["error"]
    after = await served.store().load("text-5")
    assert len(after.entries) == len(before.entries)
    # a front-end tool's result is the owner's to give, too
    tools = [{"name": "pick_color", "description": "Pick"}]
    code, _ = await asyncio.to_thread(
        post_run,
        served.url,
        served.tokens["caller"],
        run_input("front-5", "r1", [user("choose")], tools=tools),
    )
    assert code == 200
    messages = [user("choose"), {"id": "t", "role": "tool", "toolCallId": "f1", "content": "red"}]
    code, answer = await asyncio.to_thread(
        post_run,
        served.url,
        served.tokens["other"],
        run_input("front-5", "r2", messages, tools=tools),
    )
    assert code == 403
    assert "may only answer the approvals" in answer["error"]
    # the owner still can
    code, events = await asyncio.to_thread(
        post_run,
        served.url,
        served.tokens["caller"],
        run_input("front-5", "r3", messages, tools=tools),
    )
    assert code == 200
    assert events[-1].result["text"].startswith("the user chose: red")


async def test_an_app_agent_without_a_store_is_refused_clearly(served):
    code, answer = await asyncio.to_thread(
        post_run, served.url, served.tokens["caller"], run_input("nostore-1", "r1", [user("hi")])
    )
    assert code == 500
    assert "without a store" in answer["error"]


async def test_a_failing_factory_is_a_500_naming_it_without_its_secrets(served):
    code, answer = await asyncio.to_thread(
        post_run, served.url, served.tokens["caller"], run_input("broken-1", "r1", [user("hi")])
    )
    assert code == 500
    assert "could not build the agent of thread 'broken-1'" in answer["error"]
    assert "RuntimeError: cannot reach the model" in answer["error"]
    assert SECRET not in answer["error"]


async def test_an_unreadable_journal_is_a_422_and_nothing_runs(served):
    store = served.store()
    await store.create("text-odd")
    await store.append("text-odd", 0, [("message", {"bogus": 1})])  # JSON, not a message
    code, answer = await asyncio.to_thread(
        post_run, served.url, served.tokens["admin"], run_input("text-odd", "r1", [user("hi")])
    )
    assert code == 422
    assert "journal entry tether cannot read" in answer["error"]
    assert len((await served.store().load("text-odd")).entries) == 1


async def test_a_thread_busy_with_a_run_refuses_another_with_409(served):
    from ag_ui_app import GATE

    GATE.clear()
    token = served.tokens["caller"]
    first = asyncio.ensure_future(
        asyncio.to_thread(post_run, served.url, token, run_input("slow-1", "r1", [user("go")]))
    )
    try:
        for _ in range(200):  # until the first run is inside its tool
            record = await served.store().load("slow-1")
            if record is not None and any(e.kind == "tool_intent" for e in record.entries):
                break
            await asyncio.sleep(0.05)
        code, answer = await asyncio.to_thread(
            post_run, served.url, token, run_input("slow-1", "r2", [user("again", "u2")])
        )
        assert code == 409
        assert "busy" in answer["error"]
    finally:
        GATE.set()
    status, events = await first
    assert status == 200
    assert events[-1].result["text"] == "done: waited"


async def test_front_end_tools_without_a_schema_validator_say_what_to_install(served, monkeypatch):
    monkeypatch.setitem(sys.modules, "jsonschema", None)  # as with only tether[ag-ui]
    tools = [{"name": "pick_color", "description": "Pick"}]
    code, answer = await asyncio.to_thread(
        post_run,
        served.url,
        served.tokens["caller"],
        run_input("front-9", "r1", [user("choose")], tools=tools),
    )
    assert code == 500
    assert "pip install 'tether[mcp]'" in answer["error"]
    assert await served.store().load("front-9") is None


def test_a_broken_store_is_the_inboxs_503_with_its_retry_after(tmp_path: Path) -> None:
    """One token check for every route (tether.ops.server.auth.authenticate): AG-UI had
    a copy of it, without the inbox's Retry-After."""
    from live_server import call, live_server

    from tether import Agent
    from tether.durable import SQLiteStore
    from tether.models import ScriptedModel
    from tether.ops.server import create_app

    junk = tmp_path / "junk.db"
    junk.write_text("not a database\n" * 100)

    def make_agent(session_id: str) -> Agent:
        return Agent(model=ScriptedModel(["hi"]), session_id=session_id)

    app = create_app(SQLiteStore(junk), app_factory=make_agent, close_store=True)
    with live_server(app) as url:
        headers: dict[str, str] = {}
        status, body = call(
            "POST",
            url + "/ag-ui",
            body={"threadId": "t-1", "runId": "r-1", "messages": []},
            authorization="Bearer tether_0123456789abcdef_" + "x" * 43,
            headers_out=headers,
        )
    assert status == 503
    assert body == {"error": "the store cannot be read; the server log says why"}
    assert {k.lower(): v for k, v in headers.items()}["retry-after"] == "5"
