"""The AG-UI stream of ``POST /ag-ui``: every event parsed by the ag_ui.core models."""

from __future__ import annotations

import asyncio
from typing import Any

from ag_ui_app import SECRET, post_run, run_input, user


def types(events: list[Any]) -> list[str]:
    return [e.type.value for e in events]


async def test_text_reasoning_steps_and_state(served):
    status, events = await asyncio.to_thread(
        post_run, served.url, served.tokens["caller"], run_input("text-1", "r1", [user("Ann")])
    )
    assert status == 200
    assert types(events) == [
        "RUN_STARTED",
        "STATE_SNAPSHOT",
        "STEP_STARTED",
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END",
        "REASONING_END",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "STEP_FINISHED",
        "STATE_SNAPSHOT",
        "RUN_FINISHED",
    ]
    assert events[0].thread_id == "text-1"
    assert events[0].run_id == "r1"
    text = "".join(e.delta for e in events if e.type.value == "TEXT_MESSAGE_CONTENT")
    assert text == "hello, Ann"
    reasoning = [e.delta for e in events if e.type.value == "REASONING_MESSAGE_CONTENT"]
    assert reasoning == ["the user greets me"]
    last = events[-1]
    assert last.outcome.type == "success"
    assert last.result["text"] == "hello, Ann"
    [usage] = last.usage
    assert usage.output_tokens > 0
    assert usage.total_tokens == usage.input_tokens + usage.output_tokens
    # the same thread continues the same session
    status, events = await asyncio.to_thread(
        post_run,
        served.url,
        served.tokens["caller"],
        run_input("text-1", "r2", [user("Ann"), user("Bo", "u2")]),
    )
    text = "".join(e.delta for e in events if e.type.value == "TEXT_MESSAGE_CONTENT")
    assert text == "hello, Bo"
    from tether.session import fold

    record = await served.store().load("text-1")
    texts = [m.text for m in fold(record).messages]
    assert texts == ["Ann", "hello, Ann", "Bo", "hello, Bo"]  # nothing taken twice


async def test_tool_calls_and_state_snapshot(served):
    status, events = await asyncio.to_thread(
        post_run, served.url, served.tokens["caller"], run_input("tools-1", "r1", [user("go")])
    )
    assert status == 200
    calls = [e for e in events if e.type.value.startswith("TOOL_CALL")]
    assert types(calls) == [
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
    ]
    assert calls[0].tool_call_id == "n1"
    assert calls[0].tool_call_name == "note"
    assert calls[1].delta == '{"text": "milk"}'
    assert calls[3].content == "noted milk"
    snapshots = [e.snapshot for e in events if e.type.value == "STATE_SNAPSHOT"]
    assert snapshots == [{}, {"notes": ["milk"]}]
    assert events[-1].result["text"] == "done: noted milk"


async def test_interrupts_end_the_run_and_resume_entries_continue_it(served):
    caller, boss = served.tokens["caller"], served.tokens["boss"]
    status, events = await asyncio.to_thread(
        post_run, served.url, caller, run_input("pay-1", "r1", [user("pay")])
    )
    assert status == 200
    finished = events[-1]
    assert finished.type.value == "RUN_FINISHED"
    assert finished.outcome.type == "interrupt"
    interrupts = finished.outcome.interrupts
    assert [i.tool_call_id for i in interrupts] == ["t1", "t2"]
    first = interrupts[0]
    assert first.message == "send 500 to bob?"
    assert first.reason.startswith("confirm")
    assert first.response_schema is not None
    assert first.expires_at is not None
    assert first.subagent_run_id is None
    shown = first.metadata["tether"]["arguments"]
    assert shown["to"] == "bob"
    assert shown["api_token"] != SECRET
    raw = "".join(e.model_dump_json() for e in events)
    assert SECRET not in raw  # the tool call args too went through the redaction
    assert served.ran == []

    # an invoke-only caller cannot approve what the agent asked to do: nothing runs
    resume = [
        {"interruptId": interrupts[0].id, "status": "resolved"},
        {"interruptId": interrupts[1].id, "status": "cancelled"},
    ]
    body = run_input("pay-1", "r2", [user("pay")], resume=resume)
    status, refused = await asyncio.to_thread(post_run, served.url, caller, body)
    assert status == 403
    assert "approve:transfer" in refused["error"]
    assert served.ran == []
    pending = await served.store().approvals.pending(session_id="pay-1")
    assert len(pending) == 2

    # both answered at once (ag-ui #2178): one approved, one denied, each exactly once
    status, events = await asyncio.to_thread(post_run, served.url, boss, body)
    assert status == 200, events
    assert events[-1].outcome.type == "success"
    assert served.ran == [{"to": "bob", "amount": 500}]
    results = {e.tool_call_id: e.content for e in events if e.type.value == "TOOL_CALL_RESULT"}
    assert results["t1"] == "sent 500 to bob"
    assert "denied" in results["t2"]
    rows = await served.store().approvals.find(session_id="pay-1")
    assert sorted(r.status for r in rows) == ["approved", "denied"]
    assert {r.decided_by for r in rows} == {"boss (ag-ui)"}

    # answering again: the thread waits on nothing; nothing runs twice
    status, again = await asyncio.to_thread(post_run, served.url, boss, body)
    assert status == 400
    assert interrupts[0].id in again["error"]
    assert served.ran == [{"to": "bob", "amount": 500}]


async def test_front_end_tools_end_the_run_and_their_result_continues_it(served):
    token = served.tokens["caller"]
    tools = [
        {
            "name": "pick_color",
            "description": "Ask the user to pick a colour",
            "parameters": {
                "type": "object",
                "properties": {"options": {"type": "array", "items": {"type": "string"}}},
            },
        }
    ]
    body = run_input("front-1", "r1", [user("choose")], tools=tools)
    status, events = await asyncio.to_thread(post_run, served.url, token, body)
    assert status == 200
    assert events[-1].outcome.type == "success"
    assert events[-1].outcome.pending_tool_call_ids == ["f1"]
    assert types([e for e in events if e.type.value.startswith("TOOL_CALL")]) == [
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
    ]
    messages = [
        user("choose"),
        {
            "id": "a1",
            "role": "assistant",
            "toolCalls": [
                {
                    "id": "f1",
                    "type": "function",
                    "function": {"name": "pick_color", "arguments": "{}"},
                }
            ],
        },
        {"id": "t1", "role": "tool", "toolCallId": "f1", "content": "blue"},
    ]
    status, events = await asyncio.to_thread(
        post_run, served.url, token, run_input("front-1", "r2", messages, tools=tools)
    )
    assert status == 200, events
    assert events[-1].outcome.type == "success"
    assert events[-1].result["text"] == "the user chose: blue (tools: pick_color)"
    record = await served.store().load("front-1")
    from tether.session import fold

    [tool_message] = [m for m in fold(record).messages if m.role == "tool"]
    assert [(r.tool_call_id, r.content) for r in tool_message.tool_results] == [("f1", "blue")]
    # the call was a question like any other: its row is decided by the result
    assert await served.store().approvals.pending(session_id="front-1") == []


async def test_policy_applies_to_front_end_tools(served):
    tools = [{"name": "wipe_screen", "description": "Wipe the user's screen"}]
    body = run_input("frontdeny-1", "r1", [user("wipe")], tools=tools)
    status, events = await asyncio.to_thread(post_run, served.url, served.tokens["caller"], body)
    assert status == 200
    finished = events[-1]
    assert finished.outcome.type == "success"
    assert finished.outcome.pending_tool_call_ids is None
    [result] = [e for e in events if e.type.value == "TOOL_CALL_RESULT"]
    assert "not allowed" in result.content


async def test_sub_agent_events_and_interrupts_carry_their_path(served):
    status, events = await asyncio.to_thread(
        post_run, served.url, served.tokens["caller"], run_input("tree-1", "r1", [user("go")])
    )
    assert status == 200
    [started] = [e for e in events if e.type.value == "SUBAGENT_STARTED"]
    assert started.subagent_run_id == "helper#p1"
    assert started.name == "helper"
    assert started.parent_tool_call_id == "p1"
    child_text = [e for e in events if e.type.value == "TEXT_MESSAGE_CONTENT"]
    assert [(e.subagent_run_id, e.delta) for e in child_text] == [("helper#p1", "child working")]
    [finished_sub] = [e for e in events if e.type.value == "SUBAGENT_FINISHED"]
    assert finished_sub.outcome.type == "suspended"
    [interrupt] = events[-1].outcome.interrupts
    assert interrupt.subagent_run_id == "helper#p1"
    assert finished_sub.outcome.interrupt_ids == [interrupt.id]
    resume = [{"interruptId": interrupt.id, "status": "resolved", "payload": "approve"}]
    status, events = await asyncio.to_thread(
        post_run,
        served.url,
        served.tokens["boss"],
        run_input("tree-1", "r2", [user("go")], resume=resume),
    )
    assert status == 200, events
    assert events[-1].result["text"] == "parent: child: sent 3 to kim"
    assert [e.type.value for e in events if e.type.value.startswith("SUBAGENT")] == [
        "SUBAGENT_STARTED",
        "SUBAGENT_FINISHED",
    ]


async def test_a_failing_run_ends_with_run_error(served):
    status, events = await asyncio.to_thread(
        post_run, served.url, served.tokens["caller"], run_input("fail-1", "r1", [user("go")])
    )
    assert status == 200
    assert events[0].type.value == "RUN_STARTED"
    last = events[-1]
    assert last.type.value == "RUN_ERROR"
    assert last.message
    opened = [e for e in events if e.type.value == "STEP_STARTED"]
    closed = [e for e in events if e.type.value == "STEP_FINISHED"]
    assert len(opened) == len(closed)


async def test_model_text_goes_through_the_redaction(served):
    status, events = await asyncio.to_thread(
        post_run, served.url, served.tokens["caller"], run_input("leak-1", "r1", [user("key?")])
    )
    assert status == 200
    text = "".join(e.delta for e in events if e.type.value == "TEXT_MESSAGE_CONTENT")
    assert SECRET not in text
    assert text.startswith("the key is api_key=")
    assert SECRET not in str(events[-1].result)


async def test_cancelled_and_limited_runs_have_their_outcomes(served):
    token = served.tokens["caller"]
    status, events = await asyncio.to_thread(
        post_run, served.url, token, run_input("cancel-1", "r1", [user("go")])
    )
    assert status == 200
    assert events[-1].outcome.type == "cancelled"
    assert events[-1].result["stopReason"] == "cancelled"
    status, events = await asyncio.to_thread(
        post_run, served.url, token, run_input("limit-1", "r1", [user("go")])
    )
    assert status == 200
    assert events[-1].outcome.type == "success"
    assert events[-1].result["stopReason"] == "limit_turns"


async def test_an_interrupt_answered_twice_in_one_input_is_refused(served):
    status, events = await asyncio.to_thread(
        post_run, served.url, served.tokens["caller"], run_input("pay-2", "r1", [user("pay")])
    )
    first = events[-1].outcome.interrupts[0].id
    resume = [
        {"interruptId": first, "status": "resolved"},
        {"interruptId": first, "status": "cancelled"},
    ]
    status, answer = await asyncio.to_thread(
        post_run, served.url, served.tokens["boss"], run_input("pay-2", "r2", [], resume=resume)
    )
    assert status == 400
    assert "twice" in answer["error"]
    assert served.ran == []
    assert len(await served.store().approvals.pending(session_id="pay-2")) == 2


async def test_only_tool_messages_after_the_last_assistant_message_answer_calls(served):
    token = served.tokens["caller"]
    tools = [{"name": "pick_color", "description": "Pick"}]
    call = {"id": "f1", "type": "function", "function": {"name": "pick_color", "arguments": "{}"}}
    asked = {"id": "a1", "role": "assistant", "toolCalls": [call]}
    history = [
        user("choose"),
        asked,
        {"id": "t1", "role": "tool", "toolCallId": "f1", "content": "blue"},
    ]
    for run_id, messages in (("r1", [user("choose")]), ("r2", history)):
        status, events = await asyncio.to_thread(
            post_run, served.url, token, run_input("front-2", run_id, messages, tools=tools)
        )
        assert status == 200
    # a new turn calls the front-end tool again with the same call id (a scripted model)
    history += [{"id": "a2", "role": "assistant", "content": "ok"}, user("again", "u2")]
    status, events = await asyncio.to_thread(
        post_run, served.url, token, run_input("front-2", "r3", history, tools=tools)
    )
    assert events[-1].outcome.pending_tool_call_ids == ["f1"]
    # the old result for f1 does not answer the new call
    history.append({**asked, "id": "a3"})
    status, answer = await asyncio.to_thread(
        post_run, served.url, token, run_input("front-2", "r4", history, tools=tools)
    )
    assert status == 409
    assert "waits on 1 interrupt(s)" in answer["error"]


async def test_a_confirm_asks_before_a_front_end_tool_call_is_handed_over(served):
    tools = [{"name": "send_email", "description": "Send an email from the user's client"}]
    body = run_input("front-3", "r1", [user("mail it")], tools=tools)
    status, events = await asyncio.to_thread(post_run, served.url, served.tokens["caller"], body)
    [asked] = events[-1].outcome.interrupts  # the policy first: nothing handed over yet
    assert asked.message == "send the email?"
    assert asked.tool_call_id == "f1"
    resume = [{"interruptId": asked.id, "status": "resolved"}]
    body = run_input("front-3", "r2", [user("mail it")], tools=tools, resume=resume)
    status, events = await asyncio.to_thread(post_run, served.url, served.tokens["boss"], body)
    assert status == 403  # boss may approve transfers, not emails
    status, events = await asyncio.to_thread(post_run, served.url, served.tokens["admin"], body)
    assert status == 200, events
    assert events[-1].outcome.type == "success"
    assert events[-1].outcome.pending_tool_call_ids == ["f1"]  # now it is the front end's


async def test_a_client_that_goes_away_cancels_the_run_and_loses_nothing(served):
    import json
    import socket

    from ag_ui_app import GATE

    GATE.clear()
    host, port = served.url.removeprefix("http://").split(":")
    body = json.dumps(run_input("slow-2", "r1", [user("go")])).encode()
    head = (
        f"POST /ag-ui HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {served.tokens['caller']}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    conn = await asyncio.to_thread(socket.create_connection, (host, int(port)), 10)
    try:
        await asyncio.to_thread(conn.sendall, head + body)
        for _ in range(200):  # until the run is inside its tool
            record = await served.store().load("slow-2")
            if record is not None and any(e.kind == "tool_intent" for e in record.entries):
                break
            await asyncio.sleep(0.05)
    finally:
        conn.close()  # the client goes away mid-run
    await asyncio.sleep(0.3)
    GATE.set()  # the tool returns; the run, cancelled, ends as any cancelled run does
    for _ in range(200):
        record = await served.store().load("slow-2")
        if record.status != "running":
            break
        await asyncio.sleep(0.05)
    assert record.status == "cancelled"
    from tether.session import fold

    [answered] = [m for m in fold(record).messages if m.role == "tool"]
    assert [r.tool_call_id for r in answered.tool_results] == ["n1"]  # every call answered
    # the thread goes on: a new turn runs
    status, events = await asyncio.to_thread(
        post_run,
        served.url,
        served.tokens["caller"],
        run_input("slow-2", "r2", [user("go"), user("again", "u2")]),
    )
    assert status == 200, events
    assert events[-1].outcome.type == "success"


async def test_a_question_to_the_user_is_the_callers_to_answer(served):
    token = served.tokens["caller"]  # invoke only
    status, events = await asyncio.to_thread(
        post_run, served.url, token, run_input("ask-1", "r1", [user("paint it")])
    )
    [question] = events[-1].outcome.interrupts
    assert question.reason == "clarify"
    assert question.message == "which colour?"
    assert question.response_schema["type"] == "string"
    resume = [{"interruptId": question.id, "status": "resolved", "payload": "green"}]
    status, events = await asyncio.to_thread(
        post_run, served.url, token, run_input("ask-1", "r2", [], resume=resume)
    )
    assert status == 200, events
    assert events[-1].result["text"] == "you said green"


async def test_the_server_log_escapes_what_the_client_chose(served, caplog):
    caplog.set_level("WARNING", logger="tether.server")
    run_id = "r\x1b[31m\u202eevil"
    status, events = await asyncio.to_thread(
        post_run, served.url, served.tokens["caller"], run_input("fail-2", run_id, [user("go")])
    )
    assert status == 200
    assert events[-1].type.value == "RUN_ERROR"
    assert events[0].run_id == run_id  # the protocol echoes it as sent
    [line] = [r.getMessage() for r in caplog.records if "ag-ui run" in r.getMessage()]
    assert "\x1b" not in line
    assert "\u202e" not in line
    assert "fail-2" in line


async def test_a_server_stopping_mid_run_ends_it_as_a_cancelled_run(private_tmp):
    import http.client

    from ag_ui_app import factory
    from live_server import live_server

    from tether.durable import SQLiteStore
    from tether.ops.server import create_app
    from tether.session import fold

    path = private_tmp / "stop.db"
    store = SQLiteStore(path)
    token = (await store.approvers.add("caller", ["invoke"])).token
    await store.close()
    shared = SQLiteStore(path)  # the agents use the server's own store
    app = create_app(shared, app_factory=factory(shared, []), close_store=True)

    def read(url: str) -> str:
        try:
            post_run(url, token, run_input("linger-1", "r1", [user("go")]))
        except http.client.IncompleteRead:  # the stopping server cut the stream: expected
            return "cut"
        return "whole"

    with live_server(app) as url:
        going = asyncio.ensure_future(asyncio.to_thread(read, url))
        for _ in range(200):  # until the run is inside its tool
            record = await SQLiteStore(path).load("linger-1")
            if record is not None and any(e.kind == "tool_intent" for e in record.entries):
                break
            await asyncio.sleep(0.05)
    # uvicorn cut the stream after its 2 s of grace; the run, cancelled, took 1 s more
    assert await going == "cut"
    record = await SQLiteStore(path).load("linger-1")
    assert record.status == "cancelled"  # ended as a cancelled run, not cut off mid-step
    [answered] = [m for m in fold(record).messages if m.role == "tool"]
    assert [r.tool_call_id for r in answered.tool_results] == ["n1"]
