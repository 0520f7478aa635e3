"""Case: its fields checked on construction, with errors that name the case and field."""

from __future__ import annotations

import pytest

from tether.errors import ConfigurationError
from tether.evals import Case, ExpectedCall
from tether.messages import Message


def test_a_case_normalises_its_expected_tools_and_messages() -> None:
    case = Case("c", [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
                expected_tools=["a", {"name": "b", "args": {"x": 1}}, ExpectedCall("c")])  # fmt: skip
    assert isinstance(case.input, list)
    assert isinstance(case.input[0], Message)
    assert case.input[0].text == "hi"
    assert case.expected_tools == [
        ExpectedCall("a"),
        ExpectedCall("b", {"x": 1}),
        ExpectedCall("c"),
    ]
    assert case.metadata == {}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": "", "input": "x"}, "name must be a non-empty str"),
        ({"name": "n" * 201, "input": "x"}, "at most 200 characters"),
        ({"name": "c", "input": []}, "case 'c': input must be a str or a non-empty list"),
        ({"name": "c", "input": "x", "expected_output": {1: "a"}},
         "case 'c': expected_output: key 1 is not a string"),
        ({"name": "c", "input": "x", "metadata": []}, "case 'c': metadata must be a mapping"),
        ({"name": "c", "input": "x", "metadata": {"s": {1, 2}}},
         "case 'c': metadata.s: set is not JSON data"),
        ({"name": "c", "input": "x", "expected_tools": [{"name": "t", "args": [1]}]},
         "case 'c': expected_tools[0]: args must be a mapping, got list"),
    ],
)  # fmt: skip
def test_bad_fields_name_the_case_and_the_field(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        Case(**kwargs)  # type: ignore[arg-type]
    assert message in str(caught.value)
