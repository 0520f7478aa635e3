import asyncio

import pytest

from tether.tools import Tool, as_tool, tool


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def test_bare_decorator_makes_a_tool_named_after_the_function() -> None:
    @tool
    def greet(name: str) -> str:
        return f"hi {name}"

    assert isinstance(greet, Tool)
    assert greet.name == "greet"
    assert greet.read_only is False
    assert greet("bo") == "hi bo"


def test_empty_parentheses() -> None:
    @tool()
    def ping() -> str:
        return "pong"

    assert isinstance(ping, Tool)
    assert ping() == "pong"


def test_options_are_recorded() -> None:
    @tool(
        name="read",
        description="Read a file.",
        read_only=True,
        path_params=("path",),
        interactive=True,
        idempotent=True,
        timeout=2.5,
    )
    def read_file(path: str) -> str:
        return path

    assert read_file.name == "read"
    assert read_file.description == "Read a file."
    assert read_file.read_only is True
    assert read_file.path_params == ("path",)
    assert read_file.interactive is True
    assert read_file.idempotent is True
    assert read_file.timeout == 2.5
    assert read_file.spec()["name"] == "read"


def test_plain_call_with_options() -> None:
    t = tool(add, name="plus")
    assert t.name == "plus"
    assert t.fn is add
    assert t(1, 2) == 3


def test_async_function() -> None:
    @tool
    async def slow_add(a: int, b: int) -> int:
        return a + b

    assert slow_add.is_async is True
    assert tool(add).is_async is False
    assert asyncio.run(slow_add(1, 2)) == 3


def test_async_callable_instance_is_detected() -> None:
    class Fetch:
        __name__ = "fetch"

        async def __call__(self, url: str) -> str:
            return url

    t = tool(Fetch())
    assert t.is_async is True
    assert list(t.input_schema["properties"]) == ["url"]


def test_path_params_must_name_parameters() -> None:
    with pytest.raises(ValueError, match=r"path_params names 'dest'.*parameters are: src"):
        tool(lambda src: src, name="copy", path_params=("dest",))


def test_path_params_accepts_a_single_string() -> None:
    t = tool(lambda path: path, name="cat", path_params="path")
    assert t.path_params == ("path",)


def test_invalid_names_are_rejected() -> None:
    with pytest.raises(ValueError, match="not valid"):
        tool(lambda: None)  # named "<lambda>"
    with pytest.raises(ValueError, match="not valid"):
        tool(add, name="has space")


def test_timeout_must_be_positive() -> None:
    with pytest.raises(ValueError, match="timeout must be a positive"):
        tool(add, timeout=0)


def test_generator_functions_are_rejected() -> None:
    def numbers() -> object:
        yield 1

    with pytest.raises(TypeError, match="generator function"):
        tool(numbers)


def test_as_tool_wraps_functions_and_keeps_tools() -> None:
    wrapped = as_tool(add)
    assert isinstance(wrapped, Tool)
    assert wrapped.name == "add"
    assert as_tool(wrapped) is wrapped


@pytest.mark.parametrize("bad", ["add", 42, None, Tool])
def test_as_tool_rejects_non_functions(bad: object) -> None:
    with pytest.raises(TypeError, match="a tool must be a function or a Tool"):
        as_tool(bad)  # type: ignore[arg-type]


def test_as_tool_asks_for_a_name_when_there_is_none() -> None:
    import functools

    with pytest.raises(TypeError, match=r"pass name=\.\.\."):
        as_tool(functools.partial(add, 1))
    assert tool(functools.partial(add, 1), name="inc")(b=2) == 3
