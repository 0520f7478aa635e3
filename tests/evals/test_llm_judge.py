"""LLMJudge: a scripted judge's verdict and reasoning kept in the report; a judge that fails
to answer (a provider error, a verdict that does not validate) is an error cell, never a 0;
saved in a dataset file by its rubric, threshold and model string."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from eval_agents import answering
from fault_models import openai_at

from tether.errors import ConfigurationError
from tether.evals import Case, Dataset, LLMJudge, Report
from tether.messages import Message
from tether.models import RetryPolicy, ScriptedModel

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from servers.runner import ThreadServer, fault_app

RUBRIC = "The answer greets the user politely."
FAST = RetryPolicy(max_attempts=1, base_delay=0.001, max_delay=0.005, stale_timeout=20)


@pytest.fixture(scope="module")
def fault() -> Iterator[ThreadServer]:
    server = ThreadServer(fault_app()).start()
    yield server
    server.stop()


def verdict(score: float, passed: bool, reasoning: str) -> str:
    return json.dumps({"score": score, "passed": passed, "reasoning": reasoning})


def test_the_verdict_and_its_reasoning_are_kept_and_the_threshold_decides(
    tmp_path: Path,
) -> None:
    asked: list[str] = []

    def judge(messages: list[Message], _specs: list[dict[str, Any]]) -> str:
        prompt = next(m.text for m in messages if m.role == "user")
        asked.append(prompt)
        if "OUTPUT:\nHello, dear user!" in prompt:
            return verdict(0.9, True, "warm and polite")
        return verdict(0.4, False, "curt")

    cases = [Case("polite", "greet me", expected_output="a greeting"), Case("curt", "greet me")]
    dataset = Dataset(cases, [LLMJudge(RUBRIC, model=ScriptedModel(judge))])
    scripts = iter(["Hello, dear user!", "What."])
    report = dataset.evaluate(lambda: answering(next(scripts))(), concurrency=1)
    polite, curt = (row.scores["LLMJudge"] for row in report.rows)
    assert (polite.score, polite.passed) == (0.9, True)
    assert polite.reason == "judge: passed, score 0.90: warm and polite"
    assert (curt.score, curt.passed) == (0.4, False)  # under the 0.5 threshold
    assert curt.reason == "judge: failed, score 0.40: curt"
    assert RUBRIC in asked[0]
    assert "INPUT:\ngreet me" in asked[0]
    assert "EXPECTED:\na greeting" in asked[0]
    assert "EXPECTED" not in asked[1]  # no expected output, none shown
    report.to_json(tmp_path / "r.json")
    kept = Report.from_json(tmp_path / "r.json").rows[0].scores["LLMJudge"]
    assert kept.reason == "judge: passed, score 0.90: warm and polite"
    strict = Dataset(cases[:1], [LLMJudge(RUBRIC, model=ScriptedModel(judge), threshold=0.95)])
    row = strict.evaluate(answering("Hello, dear user!")).rows[0]
    assert row.scores["LLMJudge"].passed is False  # 0.9 is under 0.95


def test_the_judge_is_not_sent_the_runs_secrets() -> None:
    asked: list[str] = []

    def judge(messages: list[Message], _specs: list[dict[str, Any]]) -> str:
        asked.append(next(m.text for m in messages if m.role == "user"))
        return verdict(1.0, True, "fine")

    leaky = answering("your key: api_key=sk-live1234567890 (keep it)")
    report = Dataset([Case("a", "hi")], [LLMJudge(RUBRIC, model=ScriptedModel(judge))]).evaluate(
        leaky
    )
    assert report.rows[0].scores["LLMJudge"].passed
    assert "sk-live1234567890" not in asked[0]
    assert "OUTPUT:\nyour key: api_key=*** (keep it)" in asked[0]


def test_an_invalid_verdict_is_an_error_cell_not_a_zero() -> None:
    cases = [Case("a", "hi")]
    for bad in ("I think it is fine.", verdict(1.7, True, "too high")):
        judge = LLMJudge(RUBRIC, model=ScriptedModel(lambda _m, _s, b=bad: b))
        report = Dataset(cases, [judge]).evaluate(answering("hello"))
        score = report.rows[0].scores["LLMJudge"]
        assert score.error, score
        assert score.score is None  # never a 0
        assert score.reason.startswith("the judge did not answer: OutputValidationError")
        stats = report.evaluator("LLMJudge")
        assert (stats.errors, stats.scored) == (1, 0)
        assert report.rows[0].passed is False  # an error cell counts against the run


def test_a_judge_that_stops_without_a_verdict_is_an_error_cell() -> None:
    cut = {"text": '{"score": 0.', "stop_reason": "max_tokens"}  # continued until the limit
    looping = ScriptedModel(lambda _m, _s: cut)
    report = Dataset([Case("a", "hi")], [LLMJudge(RUBRIC, model=looping)]).evaluate(
        answering("hello")
    )
    score = report.rows[0].scores["LLMJudge"]
    assert score.error
    assert score.score is None
    assert score.reason.startswith("the judge gave no verdict (stop 'limit_turns')")


def test_a_provider_that_fails_is_an_error_cell_naming_the_failure(fault: ThreadServer) -> None:
    model = openai_at(fault, "e500", tag="judge", retry=FAST)
    report = Dataset([Case("a", "hi")], [LLMJudge(RUBRIC, model=model)]).evaluate(
        answering("hello")
    )
    score = report.rows[0].scores["LLMJudge"]
    assert score.error
    assert score.score is None
    assert score.reason.startswith("the judge did not answer:")
    assert "HTTP 500" in score.reason
    assert "sk-test" not in score.reason  # the judge model's key is masked
    assert report.rows[0].status == "ok"  # the run itself is kept


def test_a_judge_without_a_model_uses_tether_model_or_is_an_error_cell(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TETHER_MODEL", raising=False)
    report = Dataset([Case("a", "hi")], [LLMJudge(RUBRIC)]).evaluate(answering("hello"))
    score = report.rows[0].scores["LLMJudge"]
    assert score.error
    assert score.reason.startswith("the judge could not be built: Agent() needs a model")


def test_a_dataset_file_saves_the_judge_by_rubric_threshold_and_model_string(
    tmp_path: Path,
) -> None:
    judges = [
        LLMJudge(RUBRIC, model="openai:gpt-4.1", threshold=0.7, name="polite"),
        LLMJudge("Is it short?"),
    ]
    for suffix in (".yaml", ".jsonl"):
        path = tmp_path / f"judged{suffix}"
        Dataset([Case("a", "hi")], judges).to_file(path)
        loaded = Dataset.from_file(path).evaluators
        assert [(j.name, j.rubric, j.model, j.threshold) for j in loaded] == [  # type: ignore[attr-defined]
            ("polite", RUBRIC, "openai:gpt-4.1", 0.7),
            ("LLMJudge", "Is it short?", None, 0.5),
        ]
    coded = Dataset([Case("a", "hi")], [LLMJudge(RUBRIC, model=ScriptedModel(["x"]))])
    with pytest.raises(ConfigurationError) as caught:
        coded.to_file(tmp_path / "coded.yaml")
    assert "LLMJudge(model=<a Model object>) is code and cannot be saved" in str(caught.value)
    assert not (tmp_path / "coded.yaml").exists()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rubric": ""}, "LLMJudge(rubric) takes a non-empty str"),
        ({"rubric": "x" * 10_001}, "of at most 10000 characters"),
        ({"rubric": "ok", "model": 3}, "LLMJudge(model=...) takes a tether Model, a model string"),
        ({"rubric": "ok", "model": "gpt"}, "('provider:name')"),
        ({"rubric": "ok", "threshold": 2}, "LLMJudge(threshold=...) takes a number in [0, 1]"),
    ],
)
def test_bad_arguments_are_clear_errors(kwargs: dict[str, Any], message: str) -> None:
    rubric = kwargs.pop("rubric")
    with pytest.raises(ConfigurationError) as caught:
        LLMJudge(rubric, **kwargs)
    assert message in str(caught.value)


def test_a_bad_judge_in_a_file_names_the_evaluator(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "format: tether.evals.dataset/1\nevaluators:\n- type: LLMJudge\n  rubric: ''\n"
        "cases:\n- name: a\n  input: hi\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigurationError) as caught:
        Dataset.from_file(path)
    assert "evaluators[0]: LLMJudge(rubric) takes a non-empty str" in str(caught.value)
