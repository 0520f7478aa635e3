from typing import Any

import pytest
from pydantic import BaseModel

from tether.errors import ToolArgumentError
from tether.tools import tool


class Point(BaseModel):
    x: int
    y: int = 0


@tool
def add(a: int, b: int) -> int:
    return a + b


@tool
def mixed(
    flag: bool = False,
    ratio: float = 1.0,
    items: list[int] | None = None,
    options: dict[str, Any] | None = None,
    point: Point | None = None,
    label: str = "",
    choice: int | list[int] = 0,
) -> None: ...


def test_valid_arguments_pass_through() -> None:
    assert add.prepare({"a": 1, "b": 2}) == {"a": 1, "b": 2}


def test_scalar_strings_are_coerced() -> None:
    assert add.prepare({"a": "42", "b": 1}) == {"a": 42, "b": 1}
    assert mixed.prepare({"flag": "true", "ratio": "3.5"}) == {"flag": True, "ratio": 3.5}
    assert mixed.prepare({"flag": "false"}) == {"flag": False}


def test_numbers_are_accepted_for_strings() -> None:
    assert mixed.prepare({"label": 42}) == {"label": "42"}


def test_json_text_is_parsed_for_structured_parameters() -> None:
    prepared = mixed.prepare(
        {"items": "[1, 2]", "options": '{"k": 1}', "point": '{"x": "3"}', "choice": "[4]"}
    )
    assert prepared == {"items": [1, 2], "options": {"k": 1}, "point": Point(x=3), "choice": [4]}


def test_json_text_is_kept_for_string_parameters() -> None:
    assert mixed.prepare({"label": "[1, 2]"}) == {"label": "[1, 2]"}


def test_model_parameters_become_instances() -> None:
    assert mixed.prepare({"point": {"x": 1, "y": 2}})["point"] == Point(x=1, y=2)


def test_arguments_as_json_string() -> None:
    assert add.prepare('{"a": 1, "b": "2"}') == {"a": 1, "b": 2}
    assert add.prepare('"{\\"a\\": 1, \\"b\\": 2}"') == {"a": 1, "b": 2}  # encoded twice


def test_empty_arguments() -> None:
    @tool
    def now() -> str:
        return "noon"

    assert now.prepare("") == {}
    assert now.prepare(None) == {}  # type: ignore[arg-type]
    assert now.prepare({}) == {}


def error(t: Any, arguments: Any) -> str:
    with pytest.raises(ToolArgumentError) as info:
        t.prepare(arguments)
    return str(info.value)


def test_missing_argument() -> None:
    assert error(add, {"a": 1}) == "tool 'add': argument 'b' is required"


def test_wrong_type() -> None:
    assert (
        error(add, {"a": "abc", "b": 1})
        == "tool 'add': argument 'a': expected an integer, got 'abc'"
    )


def test_several_errors_are_listed() -> None:
    message = error(add, {"a": 1.5})
    assert message == (
        "tool 'add': argument 'a': expected an integer, got 1.5; argument 'b' is required"
    )


def test_unexpected_arguments_are_named_with_the_expected_ones() -> None:
    assert error(add, {"a": 1, "b": 2, "c": 3}) == (
        "tool 'add': unexpected argument 'c' (expected arguments: a, b)"
    )
    assert "unexpected arguments 'x', 'y'" in error(add, {"a": 1, "b": 2, "x": 0, "y": 0})


def test_unexpected_argument_for_a_tool_without_parameters() -> None:
    @tool
    def now() -> str:
        return "noon"

    assert (
        error(now, {"x": 1}) == "tool 'now': unexpected argument 'x' (this tool takes no arguments)"
    )


def test_invalid_json() -> None:
    assert error(add, "{") == (
        "tool 'add': arguments are not valid JSON (Expecting property name enclosed in double "
        "quotes: line 1 column 2)"
    )
    assert error(add, "nope") == (
        "tool 'add': arguments are not valid JSON (Expecting value: line 1 column 1)"
    )


def test_json_that_is_not_an_object() -> None:
    assert error(add, "[1, 2]") == "tool 'add': arguments must be a JSON object, got an array"
    assert error(add, 5) == "tool 'add': arguments must be a JSON object, got a number"


def test_nested_field_paths() -> None:
    assert error(mixed, {"point": {"x": "q"}}) == (
        "tool 'mixed': argument 'point.x': expected an integer, got 'q'"
    )
    assert error(mixed, {"items": [1, "z"]}) == (
        "tool 'mixed': argument 'items[1]': expected an integer, got 'z'"
    )


def test_unparsable_json_text_reports_the_type() -> None:
    assert error(mixed, {"items": "[1,"}) == (
        "tool 'mixed': argument 'items': expected an array, got '[1,'"
    )


def test_union_errors_are_summarized() -> None:
    assert error(mixed, {"choice": "abc"}) == (
        "tool 'mixed': argument 'choice': expected an integer or an array, got 'abc'"
    )


def test_other_errors_use_short_pydantic_text_without_urls() -> None:
    from typing import Annotated, Literal

    from pydantic import Field

    @tool
    def pick(
        mode: Literal["fast", "slow"], n: Annotated[int, Field(gt=0)], flag: bool = False
    ) -> None: ...

    message = error(pick, {"mode": "medium", "n": 0, "flag": "maybe"})
    assert message == (
        "tool 'pick': argument 'mode': expected 'fast' or 'slow', got 'medium'; "
        "argument 'n': expected greater than 0, got 0; "
        "argument 'flag': expected a boolean (true or false), got 'maybe'"
    )
    assert "http" not in message


def test_long_inputs_are_truncated() -> None:
    message = error(add, {"a": "x" * 500, "b": 1})
    assert message.endswith("...")
    assert len(message) < 120


def test_error_count_is_capped() -> None:
    @tool
    def many(a: int, b: int, c: int, d: int, e: int, f: int, g: int) -> None: ...

    message = error(many, {})
    assert message.endswith("argument 'e' is required; and 2 more errors")
