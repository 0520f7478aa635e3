"""The output and cost evaluators on passing, failing and partial runs; a score that
cannot be given is "not scored", never 0; custom evaluators of every return kind."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pytest
from eval_agents import answering, scored

from tether import Agent
from tether.control import BeforeInvocation
from tether.errors import ConfigurationError
from tether.evals import (
    Case,
    CaseRun,
    Contains,
    Custom,
    Dataset,
    Equals,
    Matches,
    MaxCost,
    MaxLatency,
    MaxTokens,
    Score,
    ValidOutput,
)
from tether.evals.evaluators import MAX_TEXT
from tether.models import ScriptedModel


@dataclass
class Verdict:
    label: str
    confidence: float


def test_equals_compares_the_text_or_the_structured_output() -> None:
    case = Case("c", "q", expected_output="yes")
    assert scored(Equals(), case, answering("yes")) == Score(1.0, True, "equal")
    failed = scored(Equals(), case, answering("no"))
    assert (failed.score, failed.passed, failed.reason) == (0.0, False, "expected 'yes', got 'no'")
    assert scored(Equals("no"), case, answering("no")).passed
    structured = Case("s", "q", expected_output={"label": "spam", "confidence": 0.9})
    answer = answering('{"label": "spam", "confidence": 0.9}')
    assert scored(Equals(), structured, answer, output_type=Verdict).passed
    missing = scored(Equals(), Case("n", "q"), answering("x"))
    assert (missing.score, missing.passed) == (None, None)
    assert "no expected value" in missing.reason


def test_contains_gives_partial_credit_and_names_what_is_missing() -> None:
    case = Case("c", "q")
    evaluator = Contains(["alpha", "beta", "gamma", "delta"], threshold=0.5)
    partial = scored(evaluator, case, answering("alpha and beta"))
    assert (partial.score, partial.passed) == (0.5, True)
    assert partial.reason == "missing: 'gamma', 'delta'"
    assert not scored(Contains(["alpha", "zeta"]), case, answering("alpha")).passed
    assert scored(Contains("ALPHA", case_sensitive=False), case, answering("alpha")).passed
    by_case = Case("e", "q", expected_output="beta")
    assert scored(Contains(), by_case, answering("alpha beta")).passed
    assert scored(Contains(), Case("n", "q"), answering("x")).score is None


def test_matches_compiles_once_and_reads_a_capped_text() -> None:
    evaluator = Matches(r"order #\d+", flags="i")
    compiled = evaluator.compiled
    assert scored(evaluator, Case("c", "q"), answering("ORDER #42 shipped")).passed
    assert evaluator.compiled is compiled
    failed = scored(Matches(r"^done$"), Case("c", "q"), answering("not done"))
    assert failed.passed is False
    assert "no match for '^done$'" in failed.reason
    tail = scored(Matches("END"), Case("c", "q"), answering("x" * MAX_TEXT + "END"))
    assert tail.passed is False  # past the cap: never read
    with pytest.raises(ConfigurationError, match="not a regex"):
        Matches("(")
    with pytest.raises(ConfigurationError, match="at most 1000 characters"):
        Matches("a" * 1001)
    with pytest.raises(ConfigurationError, match="letters of 'ims'"):
        Matches("a", flags="x")


def test_valid_output_checks_the_structured_output_against_its_type() -> None:
    good = answering('{"label": "spam", "confidence": 0.9}')
    assert scored(ValidOutput(), Case("c", "q"), good, output_type=Verdict).passed
    assert scored(ValidOutput(Verdict), Case("c", "q"), good).passed  # the text, checked
    bad = scored(ValidOutput(Verdict), Case("c", "q"), answering('{"label": 3}'))
    assert bad.passed is False
    assert "confidence" in bad.reason
    per_case = Case("t", "q", output_type=Verdict)
    assert scored(ValidOutput(), per_case, good).passed
    none = scored(ValidOutput(), Case("c", "q"), good)
    assert (none.score, "no output_type" in none.reason) == (None, True)


def test_max_tokens_and_latency_score_the_overrun() -> None:
    usage = {"input_tokens": 150, "output_tokens": 50}
    turn = {"text": "ok", "usage": usage}
    assert scored(MaxTokens(200), Case("c", "q"), answering(turn)).passed
    over = scored(MaxTokens(100), Case("c", "q"), answering(turn))
    assert (over.score, over.passed, over.reason) == (0.5, False, "over: 200 (limit 100)")
    assert scored(MaxLatency(30), Case("c", "q"), answering("ok")).passed

    def sleepy() -> Agent:
        agent = Agent(model=ScriptedModel(["ok"]), store=None)

        @agent.on(BeforeInvocation)
        async def wait(_event: Any) -> None:
            await asyncio.sleep(0.2)

        return agent

    late = scored(MaxLatency(0.05), Case("c", "q"), sleepy)
    assert late.passed is False
    assert late.score is not None
    assert late.score < 0.3


def test_max_cost_scores_a_priced_run_and_says_so_when_the_cost_is_unknown() -> None:
    def priced() -> Agent:
        model = ScriptedModel(
            [{"text": "hi", "usage": {"input_tokens": 1000, "output_tokens": 100}}],
            provider="anthropic", name="claude-sonnet-4-5",
        )  # fmt: skip
        return Agent(model=model, store=None)

    assert scored(MaxCost(1), Case("c", "q"), priced).passed
    over = scored(MaxCost("0.000001"), Case("c", "q"), priced)
    assert over.passed is False
    assert over.score is not None
    assert 0 < over.score < 1
    unknown = scored(MaxCost(1), Case("c", "q"), answering("hi"))
    assert (unknown.score, unknown.passed) == (None, None)  # not scored, never 0
    assert "cost is unknown" in unknown.reason
    report = Dataset([Case("c", "q")], [MaxCost(1)]).evaluate(answering("hi"))
    assert report.evaluator("MaxCost").not_scored == 1
    assert report.pass_rate == 1.0  # a run nobody could score is not failed
    assert MaxCost("0.5").limit == Decimal("0.5")
    with pytest.raises(ConfigurationError, match="positive USD amount"):
        MaxCost("free")


def test_a_custom_evaluator_returns_a_bool_a_float_or_a_score_sync_or_async() -> None:
    def says_hi(run: CaseRun) -> bool:
        return "hi" in run.text

    async def length(run: CaseRun) -> float:
        return min(len(run.text) / 10, 1.0)

    def explained(run: CaseRun) -> Score:
        return Score(0.25, None, f"{len(run.tool_calls)} tools")

    def broken(run: CaseRun) -> Any:
        raise KeyError("nope")

    def out_of_range(run: CaseRun) -> float:
        return 1.5

    evaluators = [says_hi, Custom(length, threshold=0.5), Custom(explained, threshold=0.2),
                  broken, out_of_range]  # fmt: skip
    report = Dataset([Case("c", "q")], evaluators).evaluate(answering("hi there"))
    scores = report.rows[0].scores
    assert scores["says_hi"] == Score(1.0, True, "")
    assert (scores["length"].score, scores["length"].passed) == (0.8, True)
    assert scores["explained"] == Score(0.25, True, "0 tools")
    assert scores["broken"].error
    assert scores["broken"].reason == "KeyError: 'nope'"
    assert scores["broken"].score is None  # an error cell, not a 0
    assert scores["out_of_range"].error
    assert "a custom evaluator returns a bool" in scores["out_of_range"].reason
    assert not report.rows[0].passed  # an evaluator that raised counts against the run
    with pytest.raises(ConfigurationError, match="an evaluator is an Evaluator"):
        Dataset([], [42])


def test_a_pattern_that_backtracks_without_bound_is_stopped_as_an_error_cell(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tether.evals import evaluators

    monkeypatch.setattr(evaluators, "MATCH_SECONDS", 0.2)
    started = time.perf_counter()
    stuck = scored(Matches(r"(a+)+$"), Case("c", "q"), answering("a" * 5000 + "!"))
    assert time.perf_counter() - started < 10
    assert stuck.error
    assert stuck.score is None  # not a 0
    assert "took more than 0.2 s" in stuck.reason
