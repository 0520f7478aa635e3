import enum
from typing import Annotated, Any, Literal, Optional

import pytest
from pydantic import BaseModel, Field

from tether import ConfigurationError
from tether.tools import ToolContext, tool


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Point(BaseModel):
    """A point."""

    x: int
    title: str = "origin"  # a property literally named "title" must survive title-stripping


def props(t: Any) -> dict[str, Any]:
    result: dict[str, Any] = t.input_schema["properties"]
    return result


def test_basic_types_and_required() -> None:
    @tool
    def f(s: str, i: int, x: float, b: bool, opt: int = 3) -> None: ...

    assert f.input_schema == {
        "type": "object",
        "properties": {
            "s": {"type": "string"},
            "i": {"type": "integer"},
            "x": {"type": "number"},
            "b": {"type": "boolean"},
            "opt": {"type": "integer", "default": 3},
        },
        "required": ["s", "i", "x", "b"],
    }


def test_optional_list_dict_literal_enum() -> None:
    @tool
    def f(
        a: Optional[str] = None,  # noqa: UP045 - typing.Union path
        b: list[int] | None = None,
        c: dict[str, int] | None = None,
        d: Literal["x", "y"] = "x",
        e: Color = Color.GREEN,
    ) -> None: ...

    p = props(f)
    assert p["a"] == {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}
    assert p["b"]["anyOf"][0] == {"type": "array", "items": {"type": "integer"}}
    assert p["c"]["anyOf"][0] == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert p["d"] == {"enum": ["x", "y"], "type": "string", "default": "x"}
    assert p["e"] == {"$ref": "#/$defs/Color", "default": "green"}
    assert f.input_schema["$defs"]["Color"] == {"enum": ["red", "green"], "type": "string"}
    assert "required" not in f.input_schema


def test_base_model_parameter_keeps_defs_without_titles() -> None:
    @tool
    def f(p: Point) -> None: ...

    schema = f.input_schema
    assert props(f)["p"] == {"$ref": "#/$defs/Point"}
    assert schema["$defs"]["Point"] == {
        "description": "A point.",
        "type": "object",
        "properties": {"x": {"type": "integer"}, "title": {"type": "string", "default": "origin"}},
        "required": ["x"],
    }
    assert "title" not in str({k: v for k, v in schema.items() if k != "$defs"})


def test_annotated_field_description_wins_over_docstring() -> None:
    @tool
    def f(n: Annotated[int, Field(description="how many", ge=0)], m: int) -> None:
        """Count.

        Args:
            n: docstring text.
            m: the m.
        """

    assert props(f)["n"] == {"type": "integer", "minimum": 0, "description": "how many"}
    assert props(f)["m"]["description"] == "the m."


def test_unannotated_parameters_accept_anything() -> None:
    @tool
    def f(x, y=None) -> None:  # type: ignore[no-untyped-def]
        ...

    assert props(f) == {"x": {}, "y": {"default": None}}


def test_google_docstring() -> None:
    @tool
    def search(query: str, limit: int = 10) -> list[str]:
        """Search the index.

        Returns the best matches first.

        Args:
            query (str): words to look for.
            limit: at most this many
                results.
        """
        return []

    assert search.description == "Search the index.\n\nReturns the best matches first."
    assert props(search)["query"]["description"] == "words to look for."
    assert props(search)["limit"]["description"] == "at most this many\nresults."


def test_numpy_docstring() -> None:
    @tool
    def move(src: str, dst: str) -> None:
        """Move a file.

        Parameters
        ----------
        src : str
            Where the file is.
        dst : str
            Where it goes.
        """

    assert move.description == "Move a file."
    assert props(move)["src"]["description"] == "Where the file is."
    assert props(move)["dst"]["description"] == "Where it goes."


def test_rest_docstring() -> None:
    @tool
    def f(a: int) -> None:
        """Do it.

        :param a: the a.
        """

    assert props(f)["a"]["description"] == "the a."


def test_description_falls_back_to_the_name_and_can_be_overridden() -> None:
    def undocumented(a: int) -> None: ...

    assert tool(undocumented).description == "undocumented"
    assert tool(undocumented, description="Explicit.").description == "Explicit."


def test_tool_context_is_excluded_from_schema() -> None:
    @tool
    def f(a: int, ctx: ToolContext) -> None: ...

    assert list(props(f)) == ["a"]
    assert f.input_schema["required"] == ["a"]


def test_two_context_parameters_are_rejected() -> None:
    with pytest.raises(TypeError, match="only one parameter may be annotated ToolContext"):

        @tool
        def f(a: ToolContext, b: ToolContext) -> None: ...


@pytest.mark.parametrize(
    ("source", "shown"),
    [
        ("def f(a: int, *rest: int) -> None: ...", r"\*rest"),
        ("def f(a: int, **extra: int) -> None: ...", r"\*\*extra"),
        ("def f(a: int, /) -> None: ...", r"a \(positional-only\)"),
    ],
)
def test_unsupported_parameter_kinds_are_rejected(source: str, shown: str) -> None:
    namespace: dict[str, Any] = {}
    exec(source, namespace)
    with pytest.raises(TypeError, match=f"tool 'f': parameter {shown} is not supported"):
        tool(namespace["f"])


def test_pydantic_field_as_default_is_rejected() -> None:
    with pytest.raises(TypeError, match="uses a pydantic Field"):

        @tool
        def f(a: int = Field(3)) -> None: ...


def test_unresolvable_hint_is_reported() -> None:
    namespace: dict[str, Any] = {}
    exec("def f(a: 'Missing') -> None: ...", namespace)
    with pytest.raises(TypeError, match="cannot resolve the type hint 'Missing'"):
        tool(namespace["f"])


def test_spec_is_built_once() -> None:
    @tool
    def f(a: int) -> None:
        """Doc."""

    spec = f.spec()
    assert spec == {"name": "f", "description": "Doc.", "input_schema": f.input_schema}
    assert f.spec() is spec


def test_bound_method_excludes_self() -> None:
    class Store:
        def get(self, key: str) -> str:
            return key

    t = tool(Store().get)
    assert list(props(t)) == ["key"]
    assert t.prepare({"key": "k"}) == {"key": "k"}


def test_unsupported_parameter_type_names_the_tool() -> None:
    class Opaque:
        pass

    with pytest.raises(ConfigurationError) as info:

        @tool
        def f(n: int, x: Opaque) -> None: ...

    message = str(info.value)
    assert message.startswith("tool 'f': parameter 'x' has type Opaque")
    assert "Supported types: str, int" in message
    assert "arbitrary_types_allowed" not in message
    assert isinstance(info.value, TypeError)  # callers that caught TypeError still do


def test_a_tool_defined_in_a_factory_builds_its_schema_once() -> None:
    from tether import tool

    def factory(prefix: str):  # type: ignore[no-untyped-def]
        @tool
        def greet(name: str, times: int = 1) -> str:
            """Greet someone."""
            return prefix + name * times

        return greet

    first, second = factory("hi "), factory("yo ")
    assert first is not second
    assert first._validate is second._validate  # built once, shared
    assert first(name="a") == "hi a"
    assert second(name="a") == "yo a"  # the closure still differs


def test_the_schema_cache_follows_what_annotations_mean() -> None:
    from pydantic import BaseModel

    from tether import tool

    def factory(field: str):  # type: ignore[no-untyped-def]
        point = type("Point", (BaseModel,), {"__annotations__": {field: int}})

        @tool
        def move(p: point) -> str:  # type: ignore[valid-type]
            """Move to a point."""
            return "ok"

        return move

    a, b = factory("x"), factory("y")
    assert a.input_schema != b.input_schema  # a new class is a new key
