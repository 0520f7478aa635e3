"""Dataset files: YAML and JSONL round-trip with the built-in evaluators; bad input is an
error naming the case (or line) and the field; files are bounded and YAML loaded safely."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tether.errors import ConfigurationError
from tether.evals import (
    Case,
    Contains,
    Dataset,
    Equals,
    ExpectedCall,
    Matches,
    MaxCost,
    MaxLatency,
    MaxTokens,
    PolicyOutcome,
    ToolTrajectory,
    ValidOutput,
    dataset_io,
)
from tether.messages import Message


def _dataset() -> Dataset:
    cases = [
        Case("plain", "hello", expected_output="echo: hello", metadata={"tags": ["smoke"]}),
        Case("tools", "search cats", expected_tools=["search", {"name": "send", "args": {"to": "b"}}]),
        Case("messages", [Message.user("hi"), Message.assistant("yo"), Message.user("again")],
             expected_output={"answer": 3, "ok": True}),
    ]  # fmt: skip
    evaluators = [
        Equals(), Contains(["a", "b"], case_sensitive=False, threshold=0.5, name="ab"),
        Matches(r"^done", flags="i"), ValidOutput(),
        ToolTrajectory(order="in_order", args="subset", threshold=0.5),
        ToolTrajectory([{"name": "search", "args": {"query": "x"}}], order="any", name="t2"),
        PolicyOutcome(denied=["delete_file"], stop_reason="end_turn"),
        MaxTokens(1000), MaxLatency(2.5), MaxCost("0.01"),
    ]  # fmt: skip
    return Dataset(cases, evaluators)


def _same(a: Dataset, b: Dataset) -> None:
    assert [c.to_data() for c in a.cases] == [c.to_data() for c in b.cases]
    assert [dataset_io.evaluator_data(e) for e in a.evaluators] == [
        dataset_io.evaluator_data(e) for e in b.evaluators
    ]
    assert [type(e) for e in a.evaluators] == [type(e) for e in b.evaluators]


@pytest.mark.parametrize("suffix", [".yaml", ".yml", ".jsonl"])
def test_a_dataset_round_trips_with_its_cases_and_built_in_evaluators(
    tmp_path: Path, suffix: str
) -> None:
    original = _dataset()
    path = tmp_path / f"cases{suffix}"
    original.to_file(path)
    loaded = Dataset.from_file(path)
    _same(original, loaded)
    assert loaded.cases[1].expected_tools == [
        ExpectedCall("search"),
        ExpectedCall("send", {"to": "b"}),
    ]
    assert isinstance(loaded.cases[2].input, list)
    assert [m.text for m in loaded.cases[2].input] == ["hi", "yo", "again"]
    assert str(loaded.evaluators[-1].params()["limit"]) == "0.01"
    # saving the loaded one gives the same file
    again = tmp_path / f"again{suffix}"
    loaded.to_file(again)
    assert again.read_text() == path.read_text()


def test_a_hand_written_yaml_file_loads(tmp_path: Path) -> None:
    path = tmp_path / "d.yaml"
    path.write_text(
        "evaluators:\n  - type: Contains\n    value: cats\n  - {type: ToolTrajectory, order: any}\n"
        "cases:\n  - name: first\n    input: search cats\n    expected_tools: [search]\n"
    )
    dataset = Dataset.from_file(path)
    assert dataset.cases[0].name == "first"
    assert [e.name for e in dataset.evaluators] == ["Contains", "ToolTrajectory"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("cases:\n  - name: a\n    input: x\n    expected_tools: 3\n",
         "cases[0]: case 'a': expected_tools must be a list of tool calls, got int"),
        ("cases:\n  - name: a\n    input: x\n    expected_tools: [{name: s, argz: {}}]\n",
         "cases[0]: case 'a': expected_tools[0]: unknown field 'argz' (name, args)"),
        ("cases:\n  - name: a\n", "cases[0] (case 'a'): the field 'input' is missing"),
        ("cases:\n  - name: a\n    input: x\n    colour: red\n",
         "cases[0] (case 'a'): unknown field 'colour'"),
        ("cases:\n  - name: a\n    input: x\n    metadata: {when: 2024-01-01}\n",
         "cases[0]: case 'a': metadata.when: date is not JSON data"),
        ("cases:\n  - name: ''\n    input: x\n",
         "cases[0]: case '': name must be a non-empty str"),
        ("cases:\n  - {name: a, input: x}\n  - {name: a, input: y}\n",
         "two cases are named 'a'"),
        ("evaluators: [{type: Judge}]\ncases: []\n", "evaluators[0]: unknown evaluator type 'Judge'"),
        ("evaluators: [{type: Matches, pattern: '('}]\ncases: []\n",
         "evaluators[0]: Matches('('): not a regex"),
        ("evaluators: [{type: MaxTokens, limit: -1}]\ncases: []\n",
         "evaluators[0]: MaxTokens(limit) takes a positive number, got -1"),
        ("evaluators: [{type: ToolTrajectory, order: sorted}]\ncases: []\n",
         "evaluators[0]: ToolTrajectory(order=...) is 'exact', 'in_order' or 'any', got 'sorted'"),
        ("evaluators: [{type: Equals, colour: 1}]\ncases: []\n",
         "evaluators[0] (Equals): "),
        ("cases: [{name: a, input: x}\n", "is not valid YAML"),
        ("- a\n", "expected a mapping with 'cases'"),
        ("format: other/9\ncases: []\n", "format 'other/9', expected 'tether.evals.dataset/1'"),
    ],
)  # fmt: skip
def test_bad_yaml_names_the_case_and_the_field(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigurationError) as caught:
        Dataset.from_file(path)
    assert message in str(caught.value)
    assert path.read_text() == text  # nothing was touched


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"name": "a", "input": "x"}', "{oops"], "line 2 is not JSON"),
        (['{"name": "a", "input": "x"}', '{"name": "b", "input": 5}'],
         "line 2: case 'b': input must be a str or a non-empty list of messages, got int"),
        (['{"name": "a", "input": "x"}', '{"format": "tether.evals.dataset/1"}'],
         "line 2: the header line must come first"),
        (['{"format": "tether.evals.dataset/1", "evaluators": [{"type": "Nope"}]}'],
         "line 1: evaluators[0]: unknown evaluator type 'Nope'"),
        (['{"name": "a", "input": [{"role": "robot"}]}'],
         "line 1: case 'a': input[0] is not a message (InputError: message role must be"),
        (["[" * 100_000], "line 1 is not JSON"),
    ],
)  # fmt: skip
def test_bad_jsonl_names_the_line_and_the_field(
    tmp_path: Path, lines: list[str], message: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ConfigurationError) as caught:
        Dataset.from_file(path)
    assert message in str(caught.value)


def test_a_file_past_the_size_limit_is_refused_before_parsing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dataset_io, "MAX_FILE_BYTES", 1000)
    path = tmp_path / "big.jsonl"
    path.write_text(json.dumps({"name": "a", "input": "x" * 2000}) + "\n")
    with pytest.raises(ConfigurationError, match="is larger than"):
        Dataset.from_file(path)


def test_the_real_limit_is_50_mb() -> None:
    assert dataset_io.MAX_FILE_BYTES == 50 * 1024 * 1024


def test_yaml_is_loaded_safely_no_python_tags_and_no_alias_bombs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    tagged = tmp_path / "tag.yaml"
    tagged.write_text(
        f"cases:\n  - name: a\n    input: !!python/object/apply:os.system ['touch {marker}']\n"
    )
    with pytest.raises(ConfigurationError, match="is not valid YAML"):
        Dataset.from_file(tagged)
    assert not marker.exists()
    levels = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):  # nine levels of ten: 10**9 values from a few hundred bytes
        levels.append(f"{chr(97 + i)}: &{chr(97 + i)} [{', '.join(['*' + chr(96 + i)] * 10)}]")
    bomb = ["cases:", "  - name: a", "    input: x", "    metadata:"]
    bomb += [f"      {level}" for level in levels]
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(bomb) + "\n")
    with pytest.raises(ConfigurationError, match="more than 1000000 values"):
        Dataset.from_file(path)
    loop = tmp_path / "loop.yaml"
    loop.write_text("cases: [{name: a, input: x, metadata: {m: &l [*l]}}]\n")
    with pytest.raises(ConfigurationError, match="levels"):
        Dataset.from_file(loop)


def test_what_cannot_be_saved_is_refused_and_no_file_is_written(tmp_path: Path) -> None:
    path = tmp_path / "out.yaml"
    with pytest.raises(ConfigurationError, match="evaluator 'mine' is custom code"):
        Dataset([Case("a", "x")], [_mine]).to_file(path)
    with pytest.raises(ConfigurationError, match="ValidOutput\\(output_type\\) is code"):
        Dataset([Case("a", "x")], [ValidOutput(dict)]).to_file(path)
    with pytest.raises(ConfigurationError, match="case 'a': output_type is code"):
        Dataset([Case("a", "x", output_type=dict)]).to_file(path)
    assert not path.exists()
    with pytest.raises(
        ConfigurationError, match=r"name ends in \.yaml, \.yml or \.jsonl, got '\.txt'"
    ):
        _dataset().to_file(tmp_path / "d.txt")


def _mine(run: object) -> bool:
    return True


_mine.__name__ = "mine"


def test_two_evaluators_of_one_name_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="two evaluators are named 'Contains'; give one"):
        Dataset([], [Contains("a"), Contains("b")])
