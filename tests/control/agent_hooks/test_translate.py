"""The wire form of the history given to pre_model_call interceptors."""

import pytest

from tether.control.agent_hooks import translate
from tether.messages import Message, TextBlock, ToolCall, ToolResult


def history(n: int) -> list[Message]:
    out: list[Message] = []
    for i in range(n):
        out.append(Message("user", [TextBlock(f"q{i}")]))
        out.append(Message("assistant", [ToolCall(f"c{i}", "add", {"a": i})]))
        out.append(Message("tool", [ToolResult(f"c{i}", "add", str(i))]))
    return out


def test_each_message_is_converted_once_and_a_replaced_one_again(monkeypatch: pytest.MonkeyPatch):
    converted: list[Message] = []
    real = translate.message_wire

    def counting(message: Message) -> list[dict]:
        converted.append(message)
        return real(message)

    monkeypatch.setattr(translate, "message_wire", counting)
    cache = translate.WireCache()
    messages = history(100)
    assert cache.of(messages) == translate.messages_wire(messages)
    converted.clear()
    messages = [*messages, Message("user", [TextBlock("next")])]
    assert cache.of(messages) == translate.messages_wire(messages)
    assert converted[0] is messages[-1]  # only the new message (then the full check's own)
    assert len(converted) == 1 + len(messages)

    converted.clear()
    edited = list(messages)
    edited[5] = Message("user", [TextBlock("rewritten")])  # a transform replaced one
    assert cache.of(edited) == translate.messages_wire(edited)
    assert converted[: len(edited) - 5] == edited[5:]  # from the replaced one on


def test_equal_messages_are_not_converted_again_and_each_call_gets_its_own_list(
    monkeypatch: pytest.MonkeyPatch,
):
    import copy

    converted: list[Message] = []
    real = translate.message_wire
    monkeypatch.setattr(translate, "message_wire", lambda m: converted.append(m) or real(m))
    cache = translate.WireCache()
    messages = history(50)
    first = cache.of(messages)
    converted.clear()
    reloaded = copy.deepcopy(messages)  # equal messages, other objects (a reload, a copy)
    second = cache.of(reloaded)
    assert converted == []
    assert second == first
    assert second is not first
    second.append({"role": "user", "content": "appended by the caller"})
    assert cache.of(messages[:10]) == first[:10]  # a reset
    assert converted == []
    assert cache.of(messages) == first
    assert converted == messages[10:]
