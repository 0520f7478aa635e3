"""Graph: edges and conditions, fan-out and fan-in, bounded cycles, durable resume."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tether import Agent, ConfigurationError
from tether.durable import Store
from tether.workflows import Graph, StepContext

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from workflow_agents import ConfirmWrites, echo, writer


def tag(name: str, log: list[str] | None = None) -> Callable[[StepContext], str]:
    def step(ctx: StepContext) -> str:
        if log is not None:
            log.append(name)
        return f"{name}({ctx.input})"

    step.__name__ = name
    return step


def test_edges_carry_outputs_and_conditions_choose_the_branch() -> None:
    def build() -> Graph:
        g = Graph()
        g.add_node("classify", lambda ctx: "spam" if "win" in ctx.input else "ham")
        g.add_node("block", tag("block"))
        g.add_node("deliver", tag("deliver"))
        g.add_edge("classify", "block", when=lambda out: out == "spam")
        g.add_edge("classify", "deliver", when=lambda out: out == "ham")
        g.set_entry("classify")
        return g

    assert build().run("win a prize").text == "block(spam)"
    assert build().run("hello").text == "deliver(ham)"


def test_a_fan_in_waits_for_every_fired_branch_even_a_longer_one() -> None:
    log: list[str] = []
    g = Graph()
    for name in ("start", "a", "a2", "b", "join"):
        g.add_node(name, tag(name, log))
    g.add_edge("start", "a")
    g.add_edge("start", "b")
    g.add_edge("a", "a2")  # the a branch is one node longer
    g.add_edge("a2", "join")
    g.add_edge("b", "join")
    g.set_entry("start")
    result = g.run("x")
    assert log.count("join") == 1
    assert log.index("join") == len(log) - 1
    assert json.loads(result.text[len("join(") : -1]) == ["b(start(x))", "a2(a(start(x)))"]
    # a and b ran in one superstep (one batch of calls)
    batches = [[c.name for c in m.tool_calls] for m in g.agent.messages if m.tool_calls]
    assert batches == [["start"], ["a", "b"], ["a2"], ["join"]]


def test_a_cycle_runs_until_its_condition_and_is_bounded_by_max_steps() -> None:
    g = Graph(max_steps=10)
    g.add_node("grow", lambda ctx: ctx.input + "a")
    g.add_edge("grow", "grow", when=lambda out: len(out) < 4)
    g.set_entry("grow")
    assert g.run("").text == "aaaa"

    forever = Graph(max_steps=5)
    forever.add_node("spin", lambda ctx: ctx.input + "!")
    forever.add_edge("spin", "spin")
    forever.set_entry("spin")
    result = forever.run("go")
    assert result.stop_reason == "limit_turns"
    assert result.reason == "graph 'graph' reached max_steps=5 with spin still to run"


def test_bad_graphs_are_configuration_errors() -> None:
    g = Graph()
    g.add_node("a", tag("a"))
    with pytest.raises(ConfigurationError, match="graph 'graph' has no node 'b'; nodes: a"):
        g.add_edge("a", "b")
    with pytest.raises(ConfigurationError, match="already has a node 'a'"):
        g.add_node("a", tag("a"))
    with pytest.raises(ConfigurationError, match="Graph node name 'two words' is not valid"):
        g.add_node("two words", tag("x"))
    with pytest.raises(ConfigurationError, match=r"has no entry: call set_entry\(name\)"):
        g.run("x")
    with pytest.raises(ConfigurationError, match=r"max_steps=\.\.\.\) takes an int >= 1"):
        Graph(max_steps=0)
    g.set_entry("a")
    g.run("x")
    with pytest.raises(ConfigurationError, match="has run: its steps are fixed"):
        g.add_node("late", tag("late"))


async def test_a_graph_interrupted_in_a_fanned_out_branch_resumes_with_a_new_store_object(
    stores: Callable[[], Store], tmp_path: Path
) -> None:
    effects = tmp_path / "effects"
    from tether import tool

    def build(store: Store) -> Graph:
        @tool
        def write(text: str) -> str:
            """Write."""
            with effects.open("a") as f:
                f.write(text + "\n")
            return "ok"

        g = Graph(store=store, session_id="g-1", interventions=[ConfirmWrites()], name="g")
        g.add_node("plan", Agent(echo("plan"), name="plan"))
        g.add_node("legal", Agent(writer("legal"), tools=[write], name="legal"))
        g.add_node("tech", Agent(echo("tech"), name="tech"))
        g.add_node("merge", lambda ctx: "merged " + ctx.input)
        g.add_edge("plan", "legal")
        g.add_edge("plan", "tech")
        g.add_edge("legal", "merge")
        g.add_edge("tech", "merge")
        g.set_entry("plan")
        return g

    first = await build(stores()).invoke_async("go")
    assert first.stop_reason == "interrupt"
    assert [i.name for i in first.interrupts] == ["legal#2/confirm:ConfirmWrites"]
    done = await build(stores()).resume_async({first.interrupts[0].id: "approve"})
    assert done.stop_reason == "end_turn"
    assert done.text == 'merged ["legal wrote (ok)", "tech: plan: go"]'
    assert effects.read_text() == "legal\n"
