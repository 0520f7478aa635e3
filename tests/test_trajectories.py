"""Trajectories: opt-in JSONL of each finished run, through the one redaction path, bounded."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from ops_agents import SECRET, transfer_agent
from secret_tree import SECRET as TREE_SECRET
from secret_tree import tree

from tether import Agent, tool
from tether.durable import SQLiteStore
from tether.errors import ConfigurationError
from tether.messages import Image
from tether.models import ScriptedModel
from tether.tools import ToolOutput
from tether.trajectories import FORMAT, Trajectories


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@tool
def lookup(query: str) -> str:
    """Look a thing up."""
    return f"found {query}"


def test_a_finished_run_writes_its_system_prompt_tools_and_messages_with_reasoning(
    tmp_path: Path,
) -> None:
    out = tmp_path / "t.jsonl"
    thinking = {"reasoning": "MARK-THINKING", "text": "MARK-ANSWER"}
    script: list[Any] = [{"tool_calls": [{"name": "lookup", "args": {"query": "q"}}]}, thinking]
    script += [thinking]
    agent = Agent(
        model=ScriptedModel(script),
        tools=[lookup],
        system_prompt="MARK-SYSTEM",
        hooks=[Trajectories(out)],
    )
    agent("MARK-PROMPT")
    agent("again")  # a second run appends a second line
    first, second = lines(out)
    assert first["format"] == FORMAT
    assert first["stop_reason"] == "end_turn"
    assert first["system_prompt"] == "MARK-SYSTEM"
    assert first["tools"][0]["name"] == "lookup"
    assert "query" in json.dumps(first["tools"][0])
    assert [m["role"] for m in first["messages"]] == ["user", "assistant", "tool", "assistant"]
    reasoning = first["messages"][-1]["content"][0]
    assert (reasoning["type"], reasoning["text"]) == ("reasoning", "MARK-THINKING")
    assert "MARK-ANSWER" in json.dumps(first["messages"][-1])
    assert first["dropped_messages"] == 0
    assert first["usage"]["model_calls"] == 2
    assert len(second["messages"]) > len(first["messages"])


def test_nothing_is_written_without_the_switch_nor_for_a_suspended_run(tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    Agent(model=ScriptedModel(["hi"]))("hello")  # off: no Trajectories
    assert list(tmp_path.iterdir()) == []
    store = SQLiteStore(tmp_path / "s.db")
    ran: list[Any] = []
    agent = transfer_agent(store, "pay", ran, hooks=[Trajectories(out)])
    suspended = agent("pay bob")
    assert suspended.stop_reason == "interrupt"
    assert not out.exists()  # not finished: written when its resume finishes
    finished = agent.resume({i.id: "approve" for i in suspended.interrupts})
    assert finished.stop_reason == "end_turn"
    (line,) = lines(out)
    text = json.dumps(line)
    assert SECRET not in text  # the secret-looking key masked, as in the views
    assert '"api_token": "***"' in text
    assert ran  # the call ran with the real value


def test_a_childs_masked_secret_is_masked_in_the_parents_trajectory(tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    lead = tree(hooks=[Trajectories(out)], depth=3)
    assert TREE_SECRET in lead("go").text
    (line,) = lines(out)
    text = json.dumps(line)
    assert TREE_SECRET not in text
    assert "logged in with ***" in text


def test_a_very_large_run_keeps_the_first_and_newest_messages_within_the_bound(
    tmp_path: Path,
) -> None:
    out = tmp_path / "t.jsonl"
    big = "x" * 3000
    agent = Agent(
        model=ScriptedModel(lambda m, s: f"reply {len(m)} " + big),
        hooks=[Trajectories(out, max_line_bytes=20_000)],
    )
    for turn in range(12):
        agent(f"prompt {turn} " + big)
    last = lines(out)[-1]
    assert len(out.read_text(encoding="utf-8").splitlines()[-1].encode()) <= 20_000
    assert last["dropped_messages"] > 0
    kept = last["messages"]
    assert kept[0]["content"][0]["text"].startswith("prompt 0 ")
    assert kept[-1]["content"][0]["text"].startswith("reply 23 ")
    assert len(kept) + last["dropped_messages"] == 24


def test_a_failed_write_is_a_warning_and_the_run_still_answers(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    out = tmp_path / "missing-dir" / "t.jsonl"
    agent = Agent(model=ScriptedModel(["fine"]), hooks=[Trajectories(out)])
    with caplog.at_level(logging.WARNING, logger="tether"):
        assert agent("hi").text == "fine"
    assert "trajectory not written" in caplog.text


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"path": ""}, "takes a file path"),
        ({"path": 3}, "takes a file path"),
        ({"path": "DIR"}, "is a directory"),
        ({"path": "t.jsonl", "max_line_bytes": 10}, "must be an int >= 4096"),
        ({"path": "t.jsonl", "max_line_bytes": True}, "must be an int >= 4096"),
    ],
)
def test_bad_options_are_refused_with_the_fix(
    tmp_path: Path, kwargs: dict[str, Any], message: str
) -> None:
    if kwargs["path"] == "DIR":
        kwargs = {**kwargs, "path": tmp_path}
    with pytest.raises(ConfigurationError, match=message):
        Trajectories(**kwargs)
    assert list(tmp_path.iterdir()) == []  # nothing created


def test_images_are_recorded_by_type_and_size_and_a_huge_header_is_clipped(
    tmp_path: Path,
) -> None:
    import base64

    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 3000).decode()

    @tool
    def shot() -> ToolOutput:
        """Take a screenshot."""
        return ToolOutput("a screenshot", [Image("image/png", png)])

    out = tmp_path / "t.jsonl"
    script: list[Any] = [{"tool_calls": [{"name": "shot", "args": {}}]}, "seen"]
    Agent(model=ScriptedModel(script), tools=[shot], hooks=[Trajectories(out)])("look")
    (line,) = lines(out)
    [result] = [b for m in line["messages"] for b in m["content"] if b["type"] == "tool_result"]
    assert result["images"] == [{"media_type": "image/png", "bytes": len(png) * 3 // 4}]
    assert png not in json.dumps(line)

    huge = tmp_path / "h.jsonl"
    prompt = "S" * 50_000
    agent = Agent(
        model=ScriptedModel(["ok"]),
        tools=[lookup],
        system_prompt=prompt,
        hooks=[Trajectories(huge, max_line_bytes=8192)],
    )
    agent("hi")
    (clipped,) = lines(huge)
    assert len(huge.read_bytes()) <= 8192 + 1
    assert clipped["header_clipped"] is True
    assert clipped["tools"] == [{"name": "lookup"}]
    assert clipped["system_prompt"] == prompt[: 8192 // 8]
