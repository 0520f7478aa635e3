"""A whole agent tree in traces: one trace per top-level run with each child's
``invoke_agent`` under the ``execute_tool`` span of the call that ran it (in process and
across a resume), and what a mask hid in any agent of the tree hidden in every span."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tether import Agent
from tether.durable import SQLiteStore

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

import secret_tree
from secret_tree import SECRET, agents_of, tree


def traced(otel: Any, lead: Agent, **options: Any) -> list[Agent]:
    agents = agents_of(lead)
    for agent in agents:
        otel.instrument(agent, **options)
    return agents


def exported(otel: Any) -> str:
    return "\n".join(span.to_json() for span in otel.spans())


def under(otel: Any, child: Any) -> Any:
    """The span ``child`` is a child of."""
    (found,) = [s for s in otel.spans() if s.context.span_id == child.parent.span_id]
    return found


@pytest.mark.parametrize("depth", [2, 3])
def test_a_delegating_run_is_one_trace_each_child_under_its_tool_call(
    otel: Any, depth: int
) -> None:
    lead = tree(depth=depth)
    traced(otel, lead)
    assert lead("go").stop_reason == "end_turn"
    assert len({s.context.trace_id for s in otel.spans()}) == 1
    invocations = otel.named("invoke_agent")
    assert len(invocations) == depth
    roots = [s for s in invocations if s.parent is None]
    assert len(roots) == 1
    for child in (s for s in invocations if s.parent is not None):
        calling = under(otel, child)
        assert calling.name in ("execute_tool ops", "execute_tool leaf")
        assert calling.context.trace_id == roots[0].context.trace_id


def test_a_resumed_tree_stays_one_trace_the_child_under_the_resumed_call(
    otel: Any, tmp_path: Path
) -> None:
    db = tmp_path / "tree.db"
    first = tree(SQLiteStore(db), "s1", confirm=True)
    traced(otel, first)
    suspended = first("go")
    assert suspended.stop_reason == "interrupt"
    answers = {i.id: True for i in suspended.interrupts}
    again = tree(SQLiteStore(db), "s1", confirm=True)  # new objects: the context is journaled
    traced(otel, again)
    assert again.resume(answers).stop_reason == "end_turn"
    assert len({s.context.trace_id for s in otel.spans()}) == 1
    resumed = [s for s in otel.named("invoke_agent") if s.attributes["tether.resumed"]]
    assert len(resumed) == 2  # the lead and its child, both resumed
    child = next(s for s in resumed if s.attributes["gen_ai.conversation.id"] != "s1")
    calling = under(otel, child)
    assert calling.name == "execute_tool ops"
    assert calling.end_time > child.start_time  # the resumed call's span, not the first one
    assert [link.attributes["tether.link"] for link in child.links] == ["resumed_from"]


@pytest.mark.parametrize("child_traced", [True, False])
def test_a_childs_masked_secret_is_masked_in_the_parents_spans(
    otel: Any, child_traced: bool
) -> None:
    lead = tree(depth=3)
    if child_traced:
        traced(otel, lead, capture_content=True)
    else:
        otel.instrument(lead, capture_content=True)
    result = lead("go")
    assert SECRET in result.text  # the run itself is untouched
    text = exported(otel)
    assert SECRET not in text
    (ops,) = otel.named("execute_tool ops")
    assert "logged in with ***" in ops.attributes["gen_ai.tool.call.result"]
    last_chat = [s for s in otel.named("chat") if "lead: " in s.to_json()][-1]
    assert (
        "lead: ops: done: welcome alice, logged in with ***"
        in last_chat.attributes["gen_ai.output.messages"]
    )


def test_the_tree_support_app_builds() -> None:
    assert len(agents_of(secret_tree.make_agent("x"))) == 2
    assert json.dumps(SECRET)


CHILD = Path(__file__).parents[1] / "support" / "traced_tree_child.py"


def step(tmp: Path, mode: str, *args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(CHILD), str(tmp / "t.db"), str(tmp / "spans"), mode, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.mark.parametrize("mode", ["continue", "link"])
def test_a_tree_resumed_in_another_process_keeps_each_child_under_its_call(
    tmp_path: Path, mode: str
) -> None:
    first = step(tmp_path, mode, "start")
    assert first["stop_reason"] == "interrupt"
    answers = json.dumps({iid: True for iid in first["interrupts"]})
    assert step(tmp_path, mode, "resume", answers)["stop_reason"] == "end_turn"
    spans = [json.loads(line) for line in (tmp_path / "spans").read_text().splitlines()]
    by_id = {s["context"]["span_id"]: s for s in spans}
    invocations = [s for s in spans if s["name"].startswith("invoke_agent")]
    assert len(invocations) == 4  # the lead and its child, started and resumed
    for child in (s for s in invocations if s["attributes"]["gen_ai.conversation.id"] != "s1"):
        calling = by_id[child["parent_id"]]  # exported by the same process
        assert calling["name"] == "execute_tool ops"
        assert calling["context"]["trace_id"] == child["context"]["trace_id"]
    traces = {s["context"]["trace_id"] for s in spans}
    assert len(traces) == (1 if mode == "continue" else 2)  # link: one trace per run
