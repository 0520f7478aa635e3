"""PolicyOutcome: denials from the tool results' status, confirmations and interrupts
from every interrupt the run raised, the stop reason from the Result."""

from __future__ import annotations

import pytest
from eval_agents import factory, scored

from tether.errors import ConfigurationError
from tether.evals import Case, PolicyOutcome


def test_an_expected_denial_passes_and_an_unexpected_one_is_named() -> None:
    case = Case("d", "delete /etc/passwd")
    assert scored(PolicyOutcome(denied=["delete_file"], stop_reason="end_turn"), case).passed
    surprise = scored(PolicyOutcome(denied=[]), case)
    assert (surprise.score, surprise.passed) == (0.0, False)
    assert surprise.reason == "unexpected denied delete_file"
    not_denied = scored(PolicyOutcome(denied=["delete_file"]), Case("s", "search cats"))
    assert not_denied.reason == "expected denied delete_file, was not"


def test_confirmations_and_interrupts_answered_or_pending_are_counted() -> None:
    case = Case("c", "send bob")
    expect = PolicyOutcome(confirmed=["send"], interrupted=["send"], stop_reason="end_turn")
    answered = scored(expect, case, factory, answers=lambda it: "approve")
    assert (answered.score, answered.passed) == (1.0, True)
    pending = scored(expect, case, factory)  # no answers: the case ends interrupted
    assert pending.passed is False
    assert pending.score == pytest.approx(2 / 3)
    assert pending.reason == "stop reason 'interrupt', expected 'end_turn'"
    refused = scored(
        PolicyOutcome(confirmed=["send"], denied=["send"]), case, factory,
        answers=lambda it: {"approved": False, "reason": "no"},
    )  # fmt: skip
    assert refused.passed, refused.reason  # a refused Confirm is a denied call


def test_policy_outcome_needs_an_expectation_and_lists_of_names() -> None:
    with pytest.raises(ConfigurationError, match="needs an expectation"):
        PolicyOutcome()
    with pytest.raises(ConfigurationError, match=r"denied=...\) takes a list of tool names"):
        PolicyOutcome(denied="delete_file")  # type: ignore[arg-type]
