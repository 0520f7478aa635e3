"""Dataset files: YAML (``.yaml`` / ``.yml``, pyyaml's ``safe_load``) and JSONL, size-checked
before parsing; evaluators are saved by type name and parameters.

YAML holds one mapping ``{format, evaluators: [...], cases: [...]}``. JSONL holds an
optional first line ``{"format": ..., "evaluators": [...]}`` and then one case per line.
An evaluator is ``{"type": "Contains", "value": "x", ...}``.
"""

from __future__ import annotations

import importlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether.errors import ConfigurationError
from tether.evals.case import Case, check_json
from tether.evals.evaluators import (
    Contains,
    Equals,
    Matches,
    MaxCost,
    MaxLatency,
    MaxTokens,
    ValidOutput,
)
from tether.evals.judge import LLMJudge
from tether.evals.policy_outcome import PolicyOutcome
from tether.evals.score import Evaluator
from tether.evals.trajectory import ToolTrajectory

if TYPE_CHECKING:
    from tether.evals.dataset import Dataset

FORMAT = "tether.evals.dataset/1"
MAX_FILE_BYTES = 50 * 1024 * 1024
BUILT_IN: dict[str, type[Evaluator]] = {
    cls.__name__: cls
    for cls in (Equals, Contains, Matches, ValidOutput, ToolTrajectory, PolicyOutcome,
                MaxTokens, MaxLatency, MaxCost, LLMJudge)
}  # fmt: skip
_CASE_FIELDS = ("name", "input", "expected_output", "expected_tools", "metadata")


def read_bounded(path: str | os.PathLike[str], what: str) -> str:
    """The UTF-8 text of ``path``, refused past MAX_FILE_BYTES before it is parsed."""
    target = Path(path)
    try:
        with target.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ConfigurationError(f"{what} {str(target)!r} cannot be read: {exc}") from None
    if len(data) > MAX_FILE_BYTES:
        raise ConfigurationError(
            f"{what} {str(target)!r} is larger than {MAX_FILE_BYTES // (1024 * 1024)} MB"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigurationError(f"{what} {str(target)!r} is not UTF-8: {exc}") from None


def load(path: str | os.PathLike[str]) -> tuple[list[Case], list[Evaluator]]:
    kind = _kind(path)
    text = read_bounded(path, "dataset file")
    if kind == "yaml":
        return _from_yaml(text, str(path))
    return _from_jsonl(text, str(path))


def dump(dataset: Dataset, path: str | os.PathLike[str]) -> None:
    kind = _kind(path)
    evaluators = [evaluator_data(e) for e in dataset.evaluators]
    cases = [c.to_data() for c in dataset.cases]
    if kind == "yaml":
        body = _yaml().safe_dump(
            {"format": FORMAT, "evaluators": evaluators, "cases": cases},
            sort_keys=False, allow_unicode=True,
        )  # fmt: skip
    else:
        lines = [json.dumps({"format": FORMAT, "evaluators": evaluators}, ensure_ascii=False)]
        lines += [json.dumps(c, ensure_ascii=False) for c in cases]
        body = "\n".join(lines) + "\n"
    Path(path).write_text(body, encoding="utf-8")


def evaluator_data(evaluator: Evaluator) -> dict[str, Any]:
    """A built-in evaluator as ``{"type": ..., parameters..., "name"?}``."""
    kind = type(evaluator).__name__
    if BUILT_IN.get(kind) is not type(evaluator):  # a subclass of a built-in is code too
        Evaluator.params(evaluator)  # raises: custom code cannot be saved
    data: dict[str, Any] = {"type": kind, **evaluator.params()}
    if evaluator.name != kind:
        data["name"] = evaluator.name
    return data


def evaluator_from(data: Any, where: str) -> Evaluator:
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise ConfigurationError(
            f"{where}: an evaluator is a mapping with a 'type' (one of {', '.join(BUILT_IN)}), "
            f"got {data!r:.80}"
        )
    check_json(data, where)  # bounded: a YAML alias bomb stops here
    params = dict(data)
    kind = params.pop("type")
    cls = BUILT_IN.get(kind)
    if cls is None:
        raise ConfigurationError(
            f"{where}: unknown evaluator type {kind!r:.60} (one of {', '.join(BUILT_IN)}; "
            "custom evaluators are added in code)"
        )
    try:
        return cls(**params)
    except ConfigurationError as exc:
        raise ConfigurationError(f"{where}: {exc}") from None
    except TypeError as exc:  # an unknown or missing parameter
        raise ConfigurationError(f"{where} ({kind}): {exc}") from None


def case_from(data: Any, where: str) -> Case:
    if not isinstance(data, dict):
        raise ConfigurationError(f"{where}: a case is a mapping, got {type(data).__name__}")
    unknown = sorted(set(data) - set(_CASE_FIELDS))
    label = f"{where} (case {data.get('name')!r:.60})" if "name" in data else where
    if unknown:
        raise ConfigurationError(
            f"{label}: unknown field {unknown[0]!r:.60} (the fields: {', '.join(_CASE_FIELDS)})"
        )
    for needed in ("name", "input"):
        if needed not in data:
            raise ConfigurationError(f"{label}: the field {needed!r} is missing")
    try:
        return Case(
            data["name"], data["input"], data.get("expected_output"),
            data.get("expected_tools"), data.get("metadata") or {},
        )  # fmt: skip
    except ConfigurationError as exc:
        raise ConfigurationError(f"{where}: {exc}") from None


def _from_yaml(text: str, path: str) -> tuple[list[Case], list[Evaluator]]:
    yaml = _yaml()
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigurationError(f"dataset file {path!r} is not valid YAML: {exc}") from None
    except RecursionError:
        raise ConfigurationError(f"dataset file {path!r} nests too deeply") from None
    if not isinstance(data, dict) or "cases" not in data:
        raise ConfigurationError(
            f"dataset file {path!r}: expected a mapping with 'cases' (and 'evaluators')"
        )
    unknown = sorted(set(data) - {"format", "evaluators", "cases"})
    if unknown:
        raise ConfigurationError(f"dataset file {path!r}: unknown field {unknown[0]!r:.60}")
    _check_format(data.get("format", FORMAT), path)
    cases, evaluators = data["cases"], data.get("evaluators") or []
    if not isinstance(cases, list) or not isinstance(evaluators, list):
        raise ConfigurationError(f"dataset file {path!r}: 'cases' and 'evaluators' are lists")
    return (
        [case_from(c, f"{path}: cases[{i}]") for i, c in enumerate(cases)],
        [evaluator_from(e, f"{path}: evaluators[{i}]") for i, e in enumerate(evaluators)],
    )


def _from_jsonl(text: str, path: str) -> tuple[list[Case], list[Evaluator]]:
    cases: list[Case] = []
    evaluators: list[Evaluator] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}: line {number}"
        try:
            data = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise ConfigurationError(f"{where} is not JSON: {exc}") from None
        if isinstance(data, dict) and "format" in data:
            if cases or evaluators:
                raise ConfigurationError(f"{where}: the header line must come first")
            _check_format(data["format"], path)
            listed = data.get("evaluators") or []
            if not isinstance(listed, list):
                raise ConfigurationError(f"{where}: 'evaluators' is a list")
            evaluators = [evaluator_from(e, f"{where}: evaluators[{i}]")
                          for i, e in enumerate(listed)]  # fmt: skip
            continue
        cases.append(case_from(data, where))
    return cases, evaluators


def _check_format(value: Any, path: str) -> None:
    if value != FORMAT:
        raise ConfigurationError(
            f"dataset file {path!r}: format {value!r:.60}, expected {FORMAT!r}"
        )


def _kind(path: str | os.PathLike[str]) -> str:
    suffix = Path(path).suffix.lower()
    if suffix in (".yaml", ".yml"):
        return "yaml"
    if suffix == ".jsonl":
        return "jsonl"
    raise ConfigurationError(
        f"dataset file {str(path)!r}: the name ends in .yaml, .yml or .jsonl, got {suffix!r}"
    )


def _yaml() -> Any:
    try:
        return importlib.import_module("yaml")
    except ImportError:
        raise ConfigurationError("YAML datasets need pyyaml: pip install 'tether[evals]'") from None
