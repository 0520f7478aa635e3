"""encode_json: canonical compact JSON, or NotSerializable naming the JSON path."""

from __future__ import annotations

import datetime as dt
import json
from collections import OrderedDict
from enum import StrEnum
from typing import Any

import pytest

from tether.durable import Entry, NotSerializable, encode_json
from tether.durable.entries import decode_entry
from tether.durable.errors import CorruptEntry


class Color(StrEnum):
    RED = "red"


def test_canonical_compact_sorted_unicode() -> None:
    text = encode_json({"b": 1, "a": [1.5, None, True], "ü": "😀"}, what="x")
    assert text == '{"a":[1.5,null,true],"b":1,"ü":"😀"}'


def test_tuples_read_back_as_lists_and_str_subclasses_as_str() -> None:
    text = encode_json({"t": (1, 2), "c": Color.RED, "o": OrderedDict(a=1)}, what="x")
    assert json.loads(text) == {"t": [1, 2], "c": "red", "o": {"a": 1}}


@pytest.mark.parametrize(
    ("value", "path", "reason"),
    [
        ({"args": {"when": dt.datetime(2024, 1, 1)}}, "$.args.when", "datetime is not JSON"),
        ({"a": [0, {"b": {1, 2}}]}, "$.a[1].b", "set is not JSON"),
        ({"a": b"x"}, "$.a", "bytes is not JSON"),
        ({"a": float("inf")}, "$.a", "inf is not valid JSON"),
        ({"a": float("nan")}, "$.a", "nan is not valid JSON"),
        ({"a": {1: "x"}}, "$.a", "key 1 is a int"),
        ({"a": {None: "x"}}, "$.a", "key None"),
        ({"odd key": {"x-y": object()}}, '$["odd key"]["x-y"]', "object is not JSON"),
        ({"s": "\ud800"}, "$.s", "lone surrogate"),
    ],
)
def test_rejections_name_the_path(value: Any, path: str, reason: str) -> None:
    with pytest.raises(NotSerializable) as info:
        encode_json(value, what="journal entry 'tool_result' of session s-1")
    err = info.value
    assert err.path == path
    assert reason in str(err)
    assert f"{path}: " in str(err)
    assert "journal entry 'tool_result' of session s-1" in str(err)


def test_root_prefix_and_message_format() -> None:
    with pytest.raises(NotSerializable) as info:
        encode_json({"args": {"when": dt.date(2024, 1, 1)}}, what="w", root="$.data")
    assert str(info.value) == "cannot write w: $.data.args.when: date is not JSON-serializable"


def test_cycles_and_excessive_depth_are_rejected() -> None:
    loop: dict[str, Any] = {}
    loop["self"] = loop
    with pytest.raises(NotSerializable, match="circular reference"):
        encode_json(loop, what="x")
    deep: list[Any] = []
    for _ in range(300):
        deep = [deep]
    with pytest.raises(NotSerializable, match="nested deeper"):
        encode_json(deep, what="x")


def test_shared_but_acyclic_values_are_fine() -> None:
    shared = {"k": 1}
    assert encode_json({"a": shared, "b": [shared, shared]}, what="x").count('"k":1') == 3


def test_decode_entry_round_trip_and_newer_format() -> None:
    entry = decode_entry("s", 1, "message", '{"a":1}', 5.0, 1)
    assert entry == Entry(1, "message", {"a": 1}, 5.0, 1)
    with pytest.raises(CorruptEntry, match="newer"):
        decode_entry("s", 2, "message", "{}", 5.0, 2)
