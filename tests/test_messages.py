import json

import pytest

from tether.messages import (
    Message,
    ReasoningBlock,
    TextBlock,
    ToolCall,
    ToolResult,
    Usage,
    sanitize_json,
    sanitize_text,
)


def full_message() -> Message:
    return Message(
        "assistant",
        [
            ReasoningBlock("thinking", signature="sig", redacted=False),
            ReasoningBlock("", signature="opaque", redacted=True),
            TextBlock("héllo ✓"),
            ToolCall("c1", "add", {"a": 1, "nested": {"x": [1, 2.5, None, True]}}),
            ToolResult("c1", "add", "3", is_error=True, status="error"),
        ],
        usage=Usage(10, 5, cache_read_tokens=2, cache_write_tokens=1),
    )


def test_json_round_trip_is_lossless():
    message = full_message()
    text = json.dumps(message.to_dict())
    restored = Message.from_dict(json.loads(text))
    assert restored == message
    assert restored.usage is not None
    assert restored.usage.total_tokens == 15


def test_round_trip_of_every_role():
    for role in ("system", "user", "assistant", "tool"):
        m = Message(role, [TextBlock("x")])  # type: ignore[arg-type]
        assert Message.from_dict(json.loads(json.dumps(m.to_dict()))) == m


def test_text_excludes_reasoning_and_tool_calls():
    assert full_message().text == "héllo ✓"
    assert [c.name for c in full_message().tool_calls] == ["add"]
    assert [r.tool_call_id for r in full_message().tool_results] == ["c1"]


def test_lone_surrogates_are_replaced_on_input():
    bad = "ok \ud800 end"
    assert sanitize_text(bad) == "ok \ufffd end"
    message = Message.user(bad)
    assert message.text == "ok \ufffd end"
    json.dumps(message.to_dict()).encode("utf-8")  # encodable now
    assert sanitize_json({"k\udfff": ["\ud83d", 1]}) == {"k\ufffd": ["\ufffd", 1]}


def test_tool_results_are_sanitised_however_they_are_built():
    # a hook or middleware building its own result gets the same treatment as a tool's value
    result = ToolResult("c1", "read", "half \udc80 char", is_error=True, status="error")
    assert result.content == "half \ufffd char"
    data = {"type": "tool_result", "tool_call_id": "c2", "name": "n", "content": "\ud800"}
    restored = Message.from_dict({"role": "tool", "content": [data]})
    assert restored.tool_results[0].content == "\ufffd"


def test_valid_text_is_returned_unchanged():
    text = "emoji 😀 and accents é"
    assert sanitize_text(text) is text


def test_from_dict_rejects_unknown_role_and_block():
    with pytest.raises(ValueError, match="role must be"):
        Message.from_dict({"role": "robot", "content": []})
    with pytest.raises(ValueError, match="unknown content block type 'image'"):
        Message.from_dict({"role": "user", "content": [{"type": "image"}]})


def test_usage_add():
    u = Usage(1, 2)
    u.add(Usage(3, 4, 5, 6))
    assert u.to_dict() == {
        "input_tokens": 4,
        "output_tokens": 6,
        "cache_read_tokens": 5,
        "cache_write_tokens": 6,
    }
