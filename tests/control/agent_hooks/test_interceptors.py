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
