import dataclasses
import datetime
import decimal
import enum
import pathlib
import uuid

from pydantic import BaseModel

from tether.tools.output import format_tool_output


class Point(BaseModel):
    x: int
    tags: set[str] = set()


@dataclasses.dataclass
class Pair:
    left: int
    right: str


class Foo:
    def __repr__(self) -> str:
        return "<Foo>"


class Color(enum.Enum):
    RED = "red"


def test_strings_are_returned_as_is() -> None:
    assert format_tool_output("héllo\n") == "héllo\n"

    class Text(str):
        pass

    assert type(format_tool_output(Text("x"))) is str


def test_none_is_null() -> None:
    assert format_tool_output(None) == "null"


def test_scalars_are_json() -> None:
    assert format_tool_output(3) == "3"
    assert format_tool_output(True) == "true"
    assert format_tool_output(False) == "false"
    assert format_tool_output(2.5) == "2.5"


def test_containers_are_compact_json_without_ascii_escapes() -> None:
    assert format_tool_output({"a": [1, 2], "b": "é"}) == '{"a":[1,2],"b":"é"}'
    assert format_tool_output((1, None)) == "[1,null]"


def test_pydantic_models_use_their_json() -> None:
    assert format_tool_output(Point(x=1)) == '{"x":1,"tags":[]}'
    assert format_tool_output([Point(x=2)]) == '[{"x":2,"tags":[]}]'


def test_dataclasses_become_objects() -> None:
    assert format_tool_output(Pair(1, "r")) == '{"left":1,"right":"r"}'
    assert format_tool_output({"p": Pair(2, "s")}) == '{"p":{"left":2,"right":"s"}}'


def test_common_types_have_silent_json_forms() -> None:
    when = datetime.datetime(2024, 1, 2, 3, 4, 5)
    ident = uuid.UUID(int=1)
    assert format_tool_output(when) == "2024-01-02T03:04:05"
    assert format_tool_output({"at": when.date(), "id": ident}) == (
        '{"at":"2024-01-02","id":"00000000-0000-0000-0000-000000000001"}'
    )
    assert format_tool_output([decimal.Decimal("1.10"), pathlib.PurePosixPath("/a")]) == (
        '["1.10","/a"]'
    )
    assert format_tool_output(Color.RED) == "red"


def test_sets_become_sorted_lists_with_a_note() -> None:
    assert format_tool_output({3, 1, 2}) == (
        "[1,2,3]\n[tether: the tool returned a value of type 'set' that is not "
        "JSON-serializable; it was converted to a list]"
    )


def test_unsortable_sets_still_become_lists() -> None:
    text = format_tool_output({1, "a"})
    assert text.splitlines()[0] in ('[1,"a"]', '["a",1]')


def test_other_objects_use_repr_with_a_note() -> None:
    assert format_tool_output(Foo()) == (
        "<Foo>\n[tether: the tool returned a value of type 'Foo' that is not "
        "JSON-serializable; it was converted with repr()]"
    )


def test_nested_non_serializable_values_are_converted_in_place() -> None:
    text = format_tool_output({"obj": Foo(), "tags": frozenset({"b", "a"}), (1, 2): 3})
    first, note = text.split("\n")
    assert first == '{"obj":"<Foo>","tags":["a","b"],"(1, 2)":3}'
    assert note == (
        "[tether: the tool returned values that are not JSON-serializable: "
        "'Foo' (converted with repr()), 'frozenset' (converted to a list), "
        "'tuple' (converted with repr())]"
    )


def test_model_with_unserializable_field_is_converted() -> None:
    class Holder(BaseModel, arbitrary_types_allowed=True):
        item: Foo

    assert format_tool_output(Holder(item=Foo())).startswith('{"item":"<Foo>"}\n[tether:')


def test_circular_references_do_not_raise() -> None:
    loop: list[object] = [1]
    loop.append(loop)
    assert format_tool_output(loop).startswith('[1,"<circular reference>"]\n[tether:')


def test_never_raises_even_when_repr_fails() -> None:
    class Broken:
        def __repr__(self) -> str:
            raise RuntimeError("no")

    assert format_tool_output(Broken()).startswith("<Broken object>\n[tether:")


def test_lone_surrogates_become_replacement_characters():
    assert format_tool_output("bad \ud800 byte") == "bad \ufffd byte"
    assert format_tool_output({"k\udfff": ["\ud83d", 1]}) == '{"k\ufffd":["\ufffd",1]}'
    assert format_tool_output({"\ud800"}) == (
        "[\"\ufffd\"]\n[tether: the tool returned a value of type 'set' that is not "
        "JSON-serializable; it was converted to a list]"
    )
    assert format_tool_output(Pair(1, "\udc80")) == '{"left":1,"right":"\ufffd"}'
    text = "emoji 😀 é"
    assert format_tool_output(text) is text  # valid text is not copied
