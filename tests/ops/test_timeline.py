"""build_timeline on journals written by hand: unreadable entries, parallel tools, the
compressed wait on the time axis, in-doubt settlements."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from tether.control.interrupts import Interrupt
from tether.durable import MemoryStore, SessionRecord
from tether.governance.redaction import show_session
from tether.messages import Message, ToolCall, ToolResult, Usage
from tether.ops.timeline import build_timeline
from tether.session import fold


async def _timeline(entries: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    store = MemoryStore()
    await store.create("s")
    for kind, data in entries:  # one append each: every entry gets its own time
        version = (await store.load("s")).version  # type: ignore[union-attr]
        await store.append("s", version, [(kind, data)])  # type: ignore[list-item]
    record: SessionRecord = await store.load("s")  # type: ignore[assignment]
    whole = replace(record, snapshot=None, entries=await store.read_entries("s"))
    shown = show_session(whole, fold(whole), [])
    return build_timeline(whole, whole.entries, shown, [], [])


def _running(at: float, resume: bool = False) -> tuple[str, dict[str, Any]]:
    return ("status", {"status": "running", "started_at": at, "by": "w", "resume": resume})


async def test_an_unreadable_entry_is_named_and_the_rest_still_shows() -> None:
    t = await _timeline(
        [
            _running(1.0),
            ("usage", {"not": "usage"}),
            ("status", {"status": "completed", "reason": None}),
        ]
    )
    assert t["unreadable_entries"] == [2]
    assert [s["kind"] for s in t["steps"]] == ["run", "end"]


async def test_parallel_tools_count_once_in_the_split_and_the_wait_is_compressed() -> None:
    calls = [ToolCall("a", "x", {"api_key": "sk-abcdef123456"}), ToolCall("b", "y", {})]
    asked = Message("assistant", list(calls), Usage(10, 5))
    interrupt = Interrupt("i1", "in_doubt", "did it run?", "in_doubt", "in_doubt", calls[0])
    t = await _timeline(
        [
            _running(0.0),
            ("message", {"message": asked.to_dict()}),
            ("tool_intent", {"call_id": "a", "name": "x"}),
            ("tool_intent", {"call_id": "b", "name": "y"}),
            ("tool_result", {"result": _result("b", "ok")}),
            ("interrupt_raised", {"interrupts": [interrupt.to_dict()], "stop_reason": "interrupt"}),
            ("status", {"status": "suspended", "reason": "in doubt"}),
            ("interrupt_answered", {"answers": {"i1": "skip"}}),
            _running(2e9, resume=True),
            ("message", {"message": Message("tool", [ToolResult("a", "x", "skipped")]).to_dict()}),
            ("status", {"status": "completed", "reason": None}),
        ]
    )
    by_kind = {s["kind"]: s for s in t["steps"]}
    doubt = by_kind["interrupt"]
    assert (doubt["title"], doubt["status"], doubt["failed"]) == ("in doubt: x", "settled", False)
    assert doubt["detail"]["answer"] == "skip"
    tools = [s for s in t["steps"] if s["kind"] == "tool"]
    assert [s["status"] for s in tools] == ["in doubt -> skipped", "ok"]  # not "ok"
    assert tools[0]["detail"]["result"] == "skipped"
    assert tools[0]["detail"]["arguments"] == {"api_key": "***"}
    split = t["time_split"]
    assert split["waiting"] == pytest.approx(by_kind["wait"]["duration"])
    assert split["waiting"] > 1e8
    assert split["tools"] <= t["end"] - t["start"]
    assert t["axis"]["length"] < 1e6  # the wait for a human does not stretch the axis
    assert sum(s["w"] for s in t["axis"]["places"]) < 1e6


async def test_an_agent_hooks_denial_is_a_failed_row_with_its_reason() -> None:
    record = {
        "interception_point": "tool.pre",
        "mode": "enforce",
        "verdict": {"decision": "deny", "reason": "path outside the sandbox"},
        "decided_by": 0,
    }
    t = await _timeline([_running(1.0), ("audit", {"agent_hooks": record})])
    [hook] = [s for s in t["steps"] if s["kind"] == "hook"]
    assert (hook["title"], hook["status"], hook["failed"]) == (
        "AGENT-HOOKS tool.pre: deny",
        "denied",
        True,
    )
    assert (hook["detail"]["reason"], hook["detail"]["decided_by"]) == (
        "path outside the sandbox",
        0,
    )


def _result(call_id: str, status: str) -> dict[str, Any]:
    return {
        "tool_call_id": call_id,
        "name": "y",
        "content": "fine",
        "is_error": False,
        "status": status,
    }


async def _nested(parent: str, child_meta: dict[str, Any] | None) -> dict[str, Any]:
    from tether.agents import child_session_id
    from tether.ops.timeline import read_timeline, timeline_of

    store = MemoryStore()
    await store.create(parent)
    call = ToolCall("d1", "researcher", {"task": "look"})
    entries: list[Any] = [
        _running(1.0),
        ("message", {"message": Message.user("go").to_dict()}),
        ("message", {"message": Message("assistant", [call], Usage(3, 1)).to_dict()}),
        ("tool_intent", {"call_id": "d1", "name": "researcher"}),
        ("message", {"message": Message("tool", [ToolResult("d1", "researcher", "ok")]).to_dict()}),
        ("status", {"status": "completed", "reason": None}),
    ]
    await store.append(parent, 0, entries)
    child = child_session_id(parent, "researcher", 1, "d1")
    await store.create(child, metadata=child_meta)
    said = Message("assistant", [], Usage(5, 2))
    await store.append(child, 0, [_running(1.1), ("message", {"message": said.to_dict()})])
    if len(parent) < 200:
        await store.create(parent + "/researcher#9.zz")  # an id that only looks like a child
    data = await read_timeline(store, parent)
    assert data is not None
    return timeline_of(data)


async def test_a_hashed_child_session_id_is_found_and_a_look_alike_is_not_nested() -> None:
    parent = "p" * 250  # too long for <parent>/<tool>#<position>.<call id>: sub_<hash>
    meta = {"tether_subagent": {"parent_session": parent, "agent_path": "researcher#d1"}}
    t = await _nested(parent, meta)
    [tool_row] = [s for s in t["steps"] if s["kind"] == "tool"]
    child = tool_row["detail"]["child_session"]["session_id"]
    assert child.startswith("sub_")
    rows = [s for s in t["steps"] if s["parent"] == tool_row["index"]]
    assert [(s["kind"], s["depth"], s["session_id"]) for s in rows] == [
        ("run", 1, child),
        ("model", 1, child),
    ]
    assert t["usage"]["total_tokens"] == 3 + 1 + 5 + 2


async def test_a_session_whose_metadata_names_another_parent_is_not_nested() -> None:
    meta = {"tether_subagent": {"parent_session": "someone-else", "agent_path": "x"}}
    t = await _nested("team/p", meta)
    assert {s["depth"] for s in t["steps"]} == {0}
    [tool_row] = [s for s in t["steps"] if s["kind"] == "tool"]
    assert "child_session" not in tool_row["detail"]
