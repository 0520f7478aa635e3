"""The context each interceptor gets: an isolated copy, made once per emission."""

import copy

from tether.control.agent_hooks.interceptors import Context


def test_a_value_held_twice_is_copied_once_and_stays_one_object():
    messages = [{"role": "user", "content": "hi"}]
    ctx = Context(target=messages, messages=messages, spec="0.1")
    copied = copy.deepcopy(ctx)
    assert copied == {"target": messages, "messages": messages, "spec": "0.1"}
    assert copied["target"] is copied["messages"]  # as copy.deepcopy would keep it
    assert copied["target"] is not messages
    copied["target"][0]["content"] = "changed"  # an interceptor's edit stays in its copy
    assert messages == [{"role": "user", "content": "hi"}]


def test_a_json_context_is_copied_without_a_python_call_per_value(monkeypatch):
    from tether.control.agent_hooks import interceptors

    calls = []
    real = interceptors._copy
    monkeypatch.setattr(interceptors, "_copy", lambda value: calls.append(value) or real(value))
    history = [
        {"role": "user", "content": f"q{i}"} if i % 2 else {"role": "tool", "is_error": False}
        for i in range(200)
    ]
    history.append({"role": "assistant", "content": None, "tool_calls": [{"args": {"x": 1.5}}]})
    ctx = Context(target=history, messages=history, sequence=3, spec="0.1")
    copied = copy.deepcopy(ctx)
    assert calls == []  # one marshal round trip, no recursive copy
    assert copied == ctx
    assert type(copied) is dict
    assert copied["target"] is copied["messages"]
    assert copied["messages"] is not history
    assert all(a is not b for a, b in zip(copied["messages"], history, strict=True))
    copied["messages"][-1]["tool_calls"][0]["args"]["x"] = 2
    assert history[-1]["tool_calls"][0]["args"] == {"x": 1.5}


class _Opaque:
    def __init__(self, value: list[int]) -> None:
        self.value = value


def test_a_context_holding_another_type_is_still_deep_copied():
    messages = [{"role": "user", "content": "hi"}]
    opaque = _Opaque([1])
    ctx = Context(target=messages, messages=messages, extra={"thing": opaque})
    copied = copy.deepcopy(ctx)
    assert copied["target"] is copied["messages"]
    assert copied["messages"] == messages
    assert copied["messages"] is not messages
    thing = copied["extra"]["thing"]
    assert type(thing) is _Opaque
    assert thing is not opaque
    assert thing.value == [1]
    thing.value.append(2)
    assert opaque.value == [1]
