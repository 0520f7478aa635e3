"""ToolTrajectory: exact, in-order and any-order matching with exact, subset or ignored
arguments; partial credit; the reason lists missing, extra and misordered calls."""

from __future__ import annotations

from typing import Any

import pytest
from eval_agents import answering, scored

from tether.errors import ConfigurationError
from tether.evals import Case, ToolTrajectory


def _calls(*calls: tuple[str, dict[str, Any]]) -> Any:
    """An agent that makes ``calls`` (one turn) and then answers."""
    turn = {"tool_calls": [{"name": n, "args": a} for n, a in calls]}
    return answering(turn, "done")


A = ("search", {"query": "a", "limit": 2})
B = ("send", {"to": "bob"})
C = ("search", {"query": "c"})
CASE = Case("t", "q")


def test_exact_order_passes_only_the_same_calls_in_the_same_order() -> None:
    expected = [
        {"name": "search", "args": {"query": "a", "limit": 2}},
        {"name": "send", "args": {"to": "bob"}},
    ]
    same = scored(ToolTrajectory(expected), CASE, _calls(A, B))
    assert (same.score, same.passed) == (1.0, True)
    swapped = scored(ToolTrajectory(expected), CASE, _calls(B, A))
    assert (swapped.score, swapped.passed) == (0.5, False)
    assert "misordered: search(query='a', limit=2)" in swapped.reason  # one of the two
    extra = scored(ToolTrajectory(expected), CASE, _calls(A, B, C))
    assert extra.passed is False
    assert extra.score == pytest.approx(2 / 3)
    assert "extra: search(query='c')" in extra.reason


def test_in_order_allows_calls_between_and_names_the_missing_ones() -> None:
    expected = [
        {"name": "search", "args": {"query": "a", "limit": 2}},
        {"name": "send", "args": {"to": "bob"}},
    ]
    between = scored(ToolTrajectory(expected, order="in_order"), CASE, _calls(A, C, B))
    assert (between.score, between.passed) == (1.0, True)
    assert "extra: search(query='c')" in between.reason  # said, not counted against
    missing = scored(ToolTrajectory(expected, order="in_order"), CASE, _calls(A, C))
    assert (missing.score, missing.passed) == (0.5, False)
    assert "missing: send(to='bob')" in missing.reason
    backwards = scored(ToolTrajectory(expected, order="in_order"), CASE, _calls(B, A))
    assert backwards.score == 0.5
    assert "misordered: search(query='a', limit=2)" in backwards.reason


def test_any_order_counts_each_expected_call_once() -> None:
    expected = ["send", {"name": "search", "args": {"query": "a", "limit": 2}}]
    assert scored(ToolTrajectory(expected, order="any"), CASE, _calls(B, A)).passed
    twice = ["search", "search"]
    once = scored(ToolTrajectory(twice, order="any"), CASE, _calls(A))
    assert (once.score, once.passed) == (0.5, False)
    assert once.reason == "1 of 2 expected calls matched (order: any); missing: search"
    # an exact-args expectation and a name-only one: the matching finds the pairing
    both = [{"name": "search", "args": {"query": "c"}}, "search"]
    assert scored(ToolTrajectory(both, order="any"), CASE, _calls(C, A)).passed


def test_arguments_exact_subset_or_ignored() -> None:
    expected = [{"name": "search", "args": {"query": "a"}}]
    exact = scored(ToolTrajectory(expected, args="exact"), CASE, _calls(A))
    assert exact.passed is False
    assert "missing: search(query='a')" in exact.reason
    assert "extra: search(query='a', limit=2)" in exact.reason
    assert scored(ToolTrajectory(expected, args="subset"), CASE, _calls(A)).passed
    wrong = [{"name": "search", "args": {"query": "zzz"}}]
    assert not scored(ToolTrajectory(wrong, args="subset"), CASE, _calls(A)).passed
    assert scored(ToolTrajectory(wrong, args="ignore"), CASE, _calls(A)).passed


def test_partial_credit_meets_a_lower_threshold() -> None:
    expected = ["search", "send", "delete_file", "search"]
    partial = scored(ToolTrajectory(expected, order="any", threshold=0.5), CASE, _calls(A, B))
    assert (partial.score, partial.passed) == (0.5, True)
    assert "missing: delete_file, search" in partial.reason


def test_the_case_gives_the_expected_calls_or_the_run_is_not_scored() -> None:
    case = Case("t", "q", expected_tools=["search"])
    assert scored(ToolTrajectory(), case, _calls(C)).passed
    nothing = scored(ToolTrajectory(), CASE, _calls(C))
    assert (nothing.score, nothing.passed) == (None, None)
    no_calls = Case("none", "q", expected_tools=[])
    assert scored(ToolTrajectory(), no_calls, answering("just text")).passed
    called = scored(ToolTrajectory(), no_calls, _calls(C))
    assert (called.score, called.passed) == (0.0, False)


def test_bad_parameters_are_refused() -> None:
    with pytest.raises(ConfigurationError, match=r"order=...\) is 'exact', 'in_order' or 'any'"):
        ToolTrajectory([], order="sorted")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=r"args=...\) is 'exact', 'subset' or 'ignore'"):
        ToolTrajectory([], args="some")  # type: ignore[arg-type]
    with pytest.raises(
        ConfigurationError, match=r"expected_tools\[0\]: a tool call is a tool name"
    ):
        ToolTrajectory([3])
    with pytest.raises(ConfigurationError, match=r"threshold=...\) takes a number in \[0, 1\]"):
        ToolTrajectory([], threshold=2)
