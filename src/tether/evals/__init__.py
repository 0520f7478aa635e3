"""Evals: datasets of cases, evaluators, a concurrent runner and its report, and the policy
what-if over a store (docs/design.md, Evals). Needs ``tether[evals]`` for YAML datasets."""

from tether.evals.case import Case, ExpectedCall
from tether.evals.compare import Change, Comparison
from tether.evals.dataset import Dataset
from tether.evals.evaluators import (
    Contains,
    Equals,
    Matches,
    MaxCost,
    MaxLatency,
    MaxTokens,
    ValidOutput,
)
from tether.evals.judge import LLMJudge, Verdict
from tether.evals.policy_check import check_policy
from tether.evals.policy_outcome import PolicyOutcome
from tether.evals.policy_report import CallCheck, PolicyReport
from tether.evals.report import Report, RunRow, Stats
from tether.evals.run import CaseRun
from tether.evals.score import Custom, Evaluator, Score
from tether.evals.trajectory import ToolTrajectory

__all__ = [
    "CallCheck",
    "Case",
    "CaseRun",
    "Change",
    "Comparison",
    "Contains",
    "Custom",
    "Dataset",
    "Equals",
    "Evaluator",
    "ExpectedCall",
    "LLMJudge",
    "Matches",
    "MaxCost",
    "MaxLatency",
    "MaxTokens",
    "PolicyOutcome",
    "PolicyReport",
    "Report",
    "RunRow",
    "Score",
    "Stats",
    "ToolTrajectory",
    "ValidOutput",
    "Verdict",
    "check_policy",
]
