"""dataset.evaluate: a fresh agent per case, concurrent and deterministic, interrupts
answered or left, errors as rows, sessions journaled in the caller's store."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from eval_agents import factory

from tether import Agent
from tether.control import BeforeModelCall
from tether.durable import SQLiteStore
from tether.errors import ConfigurationError
from tether.evals import Case, Contains, Dataset, Equals, PolicyOutcome, Report, ToolTrajectory
from tether.models import ScriptedModel


def _fifty() -> Dataset:
    verbs = ["search", "delete", "hello", "send", "search"]
    cases = [
        Case(f"case-{i}", f"{verbs[i % 5]} item{i}", expected_output=f"echo: hello item{i}",
             expected_tools=["search"])
        for i in range(50)
    ]  # fmt: skip
    return Dataset(cases, [Equals(), ToolTrajectory(order="any"), PolicyOutcome(denied=[])])


def _stable(report: Report) -> list[dict[str, Any]]:
    """The rows without what differs between runs: timings and session ids."""
    out = []
    for row in report.rows:
        data = row.to_dict()
        del data["latency"], data["session_id"]
        out.append(data)
    return out


def test_fifty_cases_at_concurrency_8_give_the_report_of_a_sequential_run() -> None:
    dataset = _fifty()
    parallel = dataset.evaluate(factory, concurrency=8, answers=lambda it: "approve")
    sequential = dataset.evaluate(factory, concurrency=1, answers=lambda it: "approve")
    assert _stable(parallel) == _stable(sequential)
    assert [r.case for r in parallel.rows] == [f"case-{i}" for i in range(50)]
    assert parallel.summary()["evaluators"] == sequential.summary()["evaluators"]
    # the scores are real: searches match the trajectory, deletes are denied
    assert parallel.evaluator("ToolTrajectory").passed == 20
    assert parallel.evaluator("PolicyOutcome").passed == 40
    assert parallel.evaluator("Equals").passed == 10


async def test_runs_overlap_up_to_the_concurrency_and_no_further() -> None:
    running = peak = 0

    def counted() -> Agent:
        agent = Agent(model=ScriptedModel(["ok"]), store=None)

        @agent.on(BeforeModelCall)
        async def wait(_event: Any) -> None:
            nonlocal running, peak
            running += 1
            peak = max(peak, running)
            await asyncio.sleep(0.02)
            running -= 1

        return agent

    dataset = Dataset([Case(f"c{i}", "hi") for i in range(12)])
    report = await dataset.evaluate_async(counted, concurrency=3)
    assert peak == 3
    assert report.pass_rate == 1.0


def test_repeat_gives_a_pass_rate_per_case() -> None:
    calls = {"n": 0}

    def flaky() -> Agent:
        calls["n"] += 1
        return Agent(model=ScriptedModel(["yes" if calls["n"] % 2 else "no"]), store=None)

    dataset = Dataset([Case("one", "q", expected_output="yes")], [Equals()])
    report = dataset.evaluate(flaky, repeat=4, concurrency=1)
    assert [r.repeat for r in report.rows] == [0, 1, 2, 3]
    assert report.case("one").runs == 4
    assert report.case("one").pass_rate == 0.5
    assert report.evaluator("Equals").pass_rate == 0.5


def test_an_interrupt_is_answered_through_resume_or_the_case_ends_interrupted() -> None:
    dataset = Dataset(
        [Case("send", "send bob")],
        [PolicyOutcome(confirmed=["send"], stop_reason="end_turn"), Contains("sent to bob")],
    )
    left = dataset.evaluate(factory)
    (row,) = left.rows
    assert (row.status, row.stop_reason) == ("interrupted", "interrupt")
    assert row.scores["PolicyOutcome"].passed is False
    assert "stop reason 'interrupt', expected 'end_turn'" in row.scores["PolicyOutcome"].reason
    seen: list[Any] = []

    async def approve(interrupt: Any) -> str:
        seen.append(interrupt)
        return "approve"

    answered = dataset.evaluate(factory, answers=approve)
    (row,) = answered.rows
    assert (row.status, row.stop_reason) == ("ok", "end_turn")
    assert [it.tool_call.name for it in seen] == ["send"]
    assert row.interrupts == [seen[0].name]
    assert row.passed
    # an answers function that returns None leaves the interrupt: the case ends interrupted
    assert dataset.evaluate(factory, answers=lambda it: None).rows[0].status == "interrupted"


def test_a_factory_or_run_that_raises_is_an_error_row_not_a_crash_nor_a_zero() -> None:
    def broken() -> Agent:
        raise RuntimeError("no model today")

    dataset = Dataset([Case("a", "hello"), Case("b", "hello")], [Contains("echo")])
    report = dataset.evaluate(broken)
    assert [r.status for r in report.rows] == ["error", "error"]
    assert report.rows[0].error == "RuntimeError: no model today"
    assert report.rows[0].scores == {}  # never scored, so never a 0
    assert report.evaluator("Contains").scored == 0
    assert report.pass_rate == 0.0  # an error is not a pass

    def exhausted() -> Agent:  # the run itself fails: ScriptExhaustedError
        return Agent(model=ScriptedModel([]), store=None)

    row = dataset.evaluate(exhausted).rows[0]
    assert row.status == "error"
    assert "ScriptExhaustedError" in (row.error or "")

    def not_an_agent() -> str:
        return "agent"

    row = dataset.evaluate(not_an_agent).rows[0]
    assert row.error == (
        "ConfigurationError: the eval factory returned str, not an Agent or a Workflow: a "
        "factory returns the session's Agent, or a workflow (tether.workflows) to serve its "
        "wf.agent"
    )


def test_each_run_is_a_journaled_session_in_the_given_store(tmp_path: Path) -> None:
    store = SQLiteStore(str(tmp_path / "evals.db"))
    dataset = Dataset([Case("s", "search cats"), Case("e", "hello")], [Contains("done")])
    report = dataset.evaluate(factory, store=store)
    ids = [r.session_id for r in report.rows]
    assert all(i and i.startswith(f"eval-{report.run_id}-") for i in ids)
    assert len(set(ids)) == 2
    for session_id, row in zip(ids, report.rows, strict=True):
        journal = str([e.data for e in asyncio.run(store.read_entries(session_id))])
        assert ("search cats" if row.case == "s" else "echo: hello") in journal, row.case

    def plain() -> Agent:  # takes no session_id and has no store: cloned onto the store
        return Agent(model=ScriptedModel(["echo"]), store=None)

    row = dataset.evaluate(plain, store=store).rows[0]
    assert row.session_id is not None
    assert asyncio.run(store.read_entries(row.session_id))


def test_tokens_cost_latency_and_stop_reason_are_recorded() -> None:
    def priced() -> Agent:
        model = ScriptedModel([{"text": "hi", "usage": {"input_tokens": 100, "output_tokens": 20}}],
                              provider="anthropic", name="claude-sonnet-4-5")  # fmt: skip
        return Agent(model=model, store=None)

    row = Dataset([Case("a", "q")]).evaluate(priced).rows[0]
    assert (row.input_tokens, row.output_tokens, row.stop_reason) == (100, 20, "end_turn")
    assert row.cost is not None
    assert row.cost > 0
    assert row.latency > 0


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"concurrency": 0}, "concurrency=...) takes an int from 1 to 256, got 0"),
        ({"repeat": "2"}, "repeat=...) takes an int from 1 to 1000, got '2'"),
        ({"answers": "yes"}, "answers=...) takes a callable, got 'yes'"),
    ],
)
def test_bad_evaluate_arguments_are_refused_before_anything_runs(
    options: dict[str, Any], message: str
) -> None:
    built: list[int] = []

    def counting() -> Agent:
        built.append(1)
        return factory()

    with pytest.raises(ConfigurationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Dataset([Case("a", "hello")]).evaluate(counting, **options)
    assert built == []


async def test_an_async_factory_is_awaited() -> None:
    async def build(session_id: str) -> Agent:
        return factory(session_id=session_id)

    report = await Dataset([Case("a", "hello")], [Equals("echo: hello")]).evaluate_async(build)
    assert report.rows[0].passed
    assert report.rows[0].session_id == f"eval-{report.run_id}-0000-0"


def test_the_interrupt_rounds_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from tether.evals import runner

    monkeypatch.setattr(runner, "MAX_ROUNDS", 0)
    asked: list[Any] = []

    def approve(interrupt: Any) -> str:
        asked.append(interrupt)
        return "approve"

    row = Dataset([Case("s", "send bob")]).evaluate(factory, answers=approve).rows[0]
    assert row.status == "interrupted"
    assert asked == []  # the bound ends the case before asking again
    monkeypatch.setattr(runner, "MAX_ROUNDS", 100)
    assert (
        Dataset([Case("s", "send bob")]).evaluate(factory, answers=approve).rows[0].status == "ok"
    )
