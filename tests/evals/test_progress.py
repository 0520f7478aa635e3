"""dataset.evaluate(progress=...): a bar of counts while the runs go, off by default, never
in the report; a bad value is refused before anything runs."""

from __future__ import annotations

import io

import pytest
from eval_agents import factory
from rich.console import Console

from tether.errors import ConfigurationError
from tether.evals import Case, Contains, Dataset

CASES = [Case(f"c{i}", f"search s{i}", expected_output=f"s{i}") for i in range(5)]
CASES.append(Case("\x1b[2Jnasty\u202e", "hello", expected_output="nope"))


def test_the_bar_counts_every_run_and_shows_no_run_text() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=120, color_system=None)
    report = Dataset(CASES, [Contains()]).evaluate(factory, progress=console, repeat=2)
    shown = out.getvalue()
    assert f"eval {report.run_id}" in shown
    assert "12/12" in shown
    assert "10 passed, 0 errors" in shown
    assert "nasty" not in shown
    assert "\u202e" not in shown
    assert len(report.rows) == 12  # the bar changes nothing of the report


def test_progress_true_draws_on_stderr_and_false_draws_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    Dataset(CASES[:2], [Contains()]).evaluate(factory)
    quiet = capsys.readouterr()
    assert quiet.out == ""
    assert quiet.err == ""
    Dataset(CASES[:2], [Contains()]).evaluate(factory, progress=True)
    drawn = capsys.readouterr()
    assert drawn.out == ""
    assert "2/2" in drawn.err


def test_an_error_row_is_counted_as_an_error() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=120, color_system=None)

    def broken() -> None:
        raise RuntimeError("no agent")

    Dataset(CASES[:2], []).evaluate(broken, progress=console)
    assert "0 passed, 2 errors" in out.getvalue()


def test_a_bad_progress_value_is_refused_before_any_run() -> None:
    built: list[int] = []

    def make() -> object:
        built.append(1)
        return factory()

    with pytest.raises(ConfigurationError) as caught:
        Dataset(CASES, []).evaluate(make, progress="yes")
    assert "progress=...) takes a bool or a rich Console, got 'yes'" in str(caught.value)
    assert built == []
