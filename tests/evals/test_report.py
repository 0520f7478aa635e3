"""Report: aggregates, JSON round trip, compare against a baseline, and a printed table
in which nothing a model or a dataset wrote can steer the terminal."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from eval_agents import answering, factory
from rich.console import Console

from tether.errors import ConfigurationError
from tether.evals import (
    Case,
    CaseRun,
    Contains,
    Dataset,
    Equals,
    MaxCost,
    Report,
    ToolTrajectory,
)


def _dataset() -> Dataset:
    cases = [
        Case("hello", "hello", expected_output="echo: hello"),
        Case("search", "search cats", expected_tools=["search"]),
        Case("send", "send bob", expected_tools=["send"]),
    ]
    return Dataset(cases, [Equals(), ToolTrajectory(), MaxCost(1)])


def test_aggregates_count_passes_not_scored_and_errors_apart() -> None:
    report = _dataset().evaluate(factory, answers=lambda it: "approve")
    assert report.pass_rate == 1.0
    equals = report.evaluator("Equals")
    assert (equals.scored, equals.passed, equals.not_scored, equals.errors) == (1, 1, 2, 0)
    assert report.evaluator("MaxCost").not_scored == 3
    assert report.evaluator("ToolTrajectory", "search").pass_rate == 1.0
    summary = report.summary()
    assert summary["runs"] == 3
    assert summary["evaluators"]["Equals"] == {
        "pass_rate": 1.0, "mean": 1.0, "scored": 1, "not_scored": 2, "errors": 0,
    }  # fmt: skip
    assert summary["cost"] is None  # unknown, not 0


def test_a_report_round_trips_through_json(tmp_path: Path) -> None:
    report = _dataset().evaluate(factory)
    path = tmp_path / "report.json"
    report.to_json(path)
    loaded = Report.from_json(path)
    assert loaded.to_dict() == report.to_dict()
    assert loaded.rows[2].status == "interrupted"
    assert json.loads(path.read_text())["format"] == "tether.evals.report/1"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{oops", "is not a tether evals report: JSONDecodeError"),
        ('{"format": "x"}', "format 'x', expected 'tether.evals.report/1'"),
        ('{"format": "tether.evals.report/1"}', "is not a tether evals report: KeyError"),
        ("[1]", "is not a tether evals report: AttributeError"),
    ],
)
def test_a_bad_report_file_is_a_clear_error(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "r.json"
    path.write_text(text)
    with pytest.raises(ConfigurationError) as caught:
        Report.from_json(path)
    assert message in str(caught.value)


def test_compare_lists_regressions_and_improvements_per_case_and_evaluator() -> None:
    cases = [Case("a", "q", expected_output="yes"), Case("b", "q", expected_output="yes")]
    baseline = Dataset(cases, [Equals(), Contains(["y", "e", "s"], threshold=0)]).evaluate(
        answering("yes")
    )
    changed = Dataset(
        [*cases[:1], Case("c", "q")], [Equals(), Contains(["y", "e", "s"], threshold=0)]
    ).evaluate(answering("ye"))
    comparison = changed.compare(baseline)
    assert comparison.regressed
    found = {(c.case, c.evaluator) for c in comparison.regressions}
    assert found == {("a", None), ("a", "Equals"), ("a", "Contains")}
    contains = next(c for c in comparison.regressions if c.evaluator == "Contains")
    assert contains.before_pass_rate == contains.after_pass_rate == 1.0  # by the mean score
    assert contains.before_score == 1.0
    assert contains.after_score == pytest.approx(2 / 3)
    assert (comparison.added, comparison.removed) == (["c"], ["b"])
    back = baseline.compare(changed)
    assert {(c.case, c.evaluator) for c in back.improvements} == found
    assert not back.regressed
    assert baseline.compare(baseline).to_dict() == {
        "regressions": [], "improvements": [], "added": [], "removed": []
    }  # fmt: skip


def test_an_error_row_is_a_regression_of_its_case() -> None:
    dataset = Dataset([Case("a", "hello")], [Contains("echo")])
    good = dataset.evaluate(factory)

    def broken() -> object:
        raise RuntimeError("down")

    bad = dataset.evaluate(broken)
    assert [(c.case, c.evaluator) for c in bad.compare(good).regressions] == [("a", None)]


def test_print_shows_the_table_and_escapes_what_the_model_and_dataset_wrote() -> None:
    hostile = "\x1b[2J\x1b]0;owned\x07\u202eevil"
    dataset = Dataset(
        [Case(f"case {hostile}", "q", expected_output="yes")],
        [Equals(), Contains("[bold]x[/bold]", name="markup")],
    )
    report = dataset.evaluate(answering(f"no {hostile}"))
    buffer = io.StringIO()
    report.print(Console(file=buffer, width=200, force_terminal=True, color_system=None))
    out = buffer.getvalue()
    assert "\x1b[2J" not in out
    assert "\x07" not in out
    assert "\u202e" not in out
    assert "\\x1b[2J" in out  # shown, inert
    assert "\\u202e" in out
    assert "[bold]x[/bold]" in out  # markup is text, not style
    assert "pass rate 0% of 1 runs" in out
    assert "failed: " in out


def test_what_the_report_shows_goes_through_the_redaction_path(tmp_path: Path) -> None:
    from tether import Agent, tool
    from tether.models import ScriptedModel

    @tool
    def login(user: str, password: str) -> str:
        """Log in."""
        return "in"

    def make() -> Agent:
        turns = [{"tool_calls": [{"name": "login", "args": {"user": "bob", "password": "hunter2-secret"}}]},
                 "logged in with sk-abcdefghijklmnop"]  # fmt: skip
        return Agent(model=ScriptedModel(turns), tools=[login], store=None)

    seen: list[str] = []

    def real(run: CaseRun) -> bool:  # evaluators see the real run
        seen.append(str(run.tool_calls[0].arguments["password"]))
        return True

    dataset = Dataset(
        [Case("c", "q", expected_tools=["search"])],
        [ToolTrajectory(), Contains("nothing"), real],
    )  # fmt: skip
    report = dataset.evaluate(make)
    assert seen == ["hunter2-secret"]
    path = tmp_path / "r.json"
    report.to_json(path)
    buffer = io.StringIO()
    report.print(Console(file=buffer, width=300))
    for shown in (path.read_text(), buffer.getvalue()):
        assert "hunter2-secret" not in shown
        assert "extra: login(user='bob', password='***')" in shown
    trajectory = report.rows[0].scores["ToolTrajectory"].reason
    assert "hunter2-secret" not in trajectory

    def failing() -> Agent:
        raise RuntimeError("cannot connect with api_key=abcd1234efgh5678")

    row = Dataset([Case("e", "q")]).evaluate(failing).rows[0]
    assert row.status == "error"
    assert row.error is not None
    assert "abcd1234efgh5678" not in row.error
    assert row.error.startswith("RuntimeError: cannot connect with api_key=")


def test_an_agent_redactor_that_raises_leaves_the_default_masks_and_the_row() -> None:
    from tether import Agent, tool
    from tether.control import ApprovalPolicy
    from tether.durable import MemoryStore
    from tether.models import ScriptedModel

    @tool
    def login(user: str, password: str) -> str:
        """Log in."""
        return "in"

    def boom(tool: str, args: dict[str, object]) -> dict[str, object]:
        raise RuntimeError("redactor down")

    def make() -> Agent:
        call = {"tool_calls": [{"name": "login", "args": {"user": "u", "password": "pw-9876543"}}]}
        return Agent(model=ScriptedModel([call, "ok"]), tools=[login], store=MemoryStore(),
                     approvals=ApprovalPolicy(redactor=boom))  # fmt: skip

    row = Dataset([Case("c", "q", expected_tools=[])], [ToolTrajectory()]).evaluate(make).rows[0]
    assert row.status == "ok"
    reason = row.scores["ToolTrajectory"].reason
    assert "password='***'" in reason
    assert "pw-9876543" not in reason
