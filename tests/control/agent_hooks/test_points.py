"""AGENT-HOOKS through tether's real loop: transform write-back at each point, denies, modes."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from agent_hooks import InterceptionRecord, Verdict

from tether import Agent, tool
from tether.control.agent_hooks import AgentHooksHost
from tether.messages import Image, Message
from tether.models import ScriptedModel
from tether.tools import ToolOutput

SEEN: list[list[Message]] = []
RAN: list[dict[str, Any]] = []


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    RAN.append({"key": key})
    return f"value-of-{key}"


def script(messages: list[Message], specs: list[dict[str, Any]]) -> dict[str, Any]:
    SEEN.append(list(messages))
    if messages[-1].role == "tool":
        return {"text": "answer: " + messages[-1].tool_results[0].content}
    return {"tool_calls": [{"id": "c1", "name": "lookup", "args": {"key": "k"}}]}


class At:
    """Allow everywhere; return ``verdict`` at ``point``."""

    def __init__(self, point: str, verdict: dict[str, Any]) -> None:
        self.point = point
        self.verdict = verdict
        self.times = -1  # how many times to answer ``verdict`` (-1: always)
        self.contexts: list[dict[str, Any]] = []

    def intercept(self, context: dict[str, Any]) -> dict[str, Any]:
        self.contexts.append(context)
        if context["interception_point"] == self.point and self.times != 0:
            self.times -= 1
            return self.verdict
        return {"decision": "allow"}


def transform(path: str, value: Any) -> dict[str, Any]:
    return {"decision": "transform", "reason": "t:x", "transform": {"path": path, "value": value}}


def run(interceptor: Any, **options: Any) -> tuple[Agent, Any]:
    SEEN.clear()
    RAN.clear()
    host = AgentHooksHost([interceptor], **options)
    agent = Agent(model=ScriptedModel(script), tools=[lookup], agent_hooks=host)
    return agent, agent("question")


def test_allow_all_runs_every_point_in_order() -> None:
    records: list[InterceptionRecord] = []
    spy = At("none", {})
    _, result = run(spy, record_sink=records.append)
    assert result.text == "answer: value-of-k"
    points = [c["interception_point"] for c in spy.contexts]
    assert points == [
        "agent_startup",
        "input",
        "pre_model_call",
        "post_model_call",
        "pre_tool_call",
        "post_tool_call",
        "pre_model_call",
        "post_model_call",
        "output",
        "agent_shutdown",
    ]
    assert [r.sequence for r in records] == list(range(10))
    assert spy.contexts[-1]["summary"]["reason"] == "completed"


def test_input_transform_changes_what_the_model_sees() -> None:
    agent, result = run(At("input", transform("$target.content", "rewritten")))
    assert SEEN[0][0].text == "rewritten"
    assert agent.messages[0].text == "rewritten"
    assert result.stop_reason == "end_turn"


def test_pre_model_call_transform_changes_the_request_only() -> None:
    agent, _ = run(At("pre_model_call", transform("$target[0].content", "sent instead")))
    assert SEEN[0][0].text == "sent instead"
    assert agent.messages[0].text == "question"  # the history keeps the input


def test_post_model_call_transform_rewrites_the_reply() -> None:
    interceptor = At("post_model_call", transform("$target.tool_calls[0].args.key", "other"))
    interceptor.times = 1
    agent, result = run(interceptor)
    assert RAN == [{"key": "other"}]
    assert agent.messages[1].tool_calls[0].arguments == {"key": "other"}
    assert result.text.startswith("answer: value-of-other")


def test_pre_tool_call_transform_runs_the_rewritten_arguments() -> None:
    spy = At("pre_tool_call", transform("$target.key", "safe"))
    _, result = run(spy)
    assert RAN == [{"key": "safe"}]
    post = next(c for c in spy.contexts if c["interception_point"] == "post_tool_call")
    assert post["tool_call"]["args"] == {"key": "safe"}
    assert result.text == "answer: value-of-safe"


def test_post_tool_call_transform_is_what_the_model_sees() -> None:
    _, result = run(At("post_tool_call", transform("$target", "scrubbed")))
    assert SEEN[1][-1].tool_results[0].content == "scrubbed"
    assert result.text == "answer: scrubbed"


PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(24)).decode()


@tool
def snapshot(key: str) -> ToolOutput:
    """A screenshot of a key."""
    return ToolOutput(f"shot of {key} [image 1 (image/png) attached]", [Image("image/png", PNG)])


@pytest.mark.parametrize(
    ("point", "path", "value"),
    [
        ("post_tool_call", "$target", "scrubbed"),
        ("pre_model_call", "$target[2].content", "scrubbed"),
    ],
)
def test_a_transform_of_a_tool_result_keeps_the_image_it_did_not_touch(
    point: str, path: str, value: str
) -> None:
    seen: list[list[Message]] = []

    def shoot(messages: list[Message], specs: list[dict[str, Any]]) -> Any:
        seen.append(list(messages))
        if messages[-1].role == "tool":
            return "looked"
        return {"tool_calls": [{"id": "c1", "name": "snapshot", "args": {"key": "k"}}]}

    def after_the_tool(context: dict[str, Any]) -> dict[str, Any]:
        target = context.get("target")
        later = point == "post_tool_call" or (isinstance(target, list) and len(target) > 2)
        if context["interception_point"] == point and later:
            return transform(path, value)
        return {"decision": "allow"}

    host = AgentHooksHost([after_the_tool])
    agent = Agent(model=ScriptedModel(shoot), tools=[snapshot], agent_hooks=host)
    assert agent("look").text == "looked"
    (sent,) = seen[1][-1].tool_results  # what the model got after the tool
    assert sent.content == "scrubbed"
    assert sent.images == (Image("image/png", PNG),)  # 1 -> 1, not 1 -> 0
    if point == "post_tool_call":  # the history keeps it too (pre_model_call: the request only)
        assert agent.messages[2].tool_results[0].images == (Image("image/png", PNG),)


def test_output_transform_is_what_the_caller_and_history_get() -> None:
    agent, result = run(At("output", transform("$target.content", "redacted")))
    assert result.text == "redacted"
    assert agent.messages[-1].text == "redacted"


@pytest.mark.parametrize("point", ["agent_startup", "input", "pre_model_call", "output"])
def test_deny_ends_the_run_blocked_and_still_shuts_down(point: str) -> None:
    spy = At(point, {"decision": "deny", "reason": "p:no"})
    agent, result = run(spy)
    assert result.stop_reason == "blocked"
    assert "p:no" in (result.reason or "")
    assert spy.contexts[-1]["interception_point"] == "agent_shutdown"
    assert spy.contexts[-1]["summary"]["reason"] == "error"
    assert all(m.text != "answer: value-of-k" for m in agent.messages)


def test_deny_at_pre_tool_call_gives_the_model_the_reason_not_the_payload() -> None:
    spy = At("pre_tool_call", {"decision": "deny", "reason": "p:dangerous"})
    _, result = run(spy)
    assert RAN == []
    seen = SEEN[1][-1].tool_results[0]
    assert seen.is_error
    assert seen.status == "denied"
    assert "p:dangerous" in seen.content
    assert "post_tool_call" not in [c["interception_point"] for c in spy.contexts]
    assert result.stop_reason == "end_turn"


def test_deny_at_post_tool_call_discards_the_result() -> None:
    _, result = run(At("post_tool_call", {"decision": "deny", "reason": "p:tainted"}))
    assert RAN == [{"key": "k"}]
    seen = SEEN[1][-1].tool_results[0].content
    assert "p:tainted" in seen
    assert "value-of-k" not in seen
    assert result.stop_reason == "end_turn"


def test_evaluate_only_changes_nothing() -> None:
    deny_all = At("any", {})
    deny_all.intercept = lambda ctx: {"decision": "deny", "reason": "p:all"}  # type: ignore[method-assign]
    records: list[InterceptionRecord] = []
    _, result = run(deny_all, mode="evaluate_only", record_sink=records.append)
    baseline_seen = [[m.text for m in call] for call in SEEN]
    assert result.stop_reason == "end_turn"
    assert result.text == "answer: value-of-k"
    assert RAN == [{"key": "k"}]
    assert len(records) == 10
    assert all(r.verdict.decision.value == "deny" for r in records)
    _, plain = run(lambda ctx: Verdict.allow())
    assert plain.text == result.text
    assert [[m.text for m in c] for c in SEEN] == baseline_seen
    ev = At("pre_tool_call", transform("$target.key", "x"))
    _, transformed = run(ev, mode="evaluate_only")
    assert RAN == [{"key": "k"}]
    assert transformed.text == "answer: value-of-k"


def test_zero_interceptors_in_enforce_mode_deny() -> None:
    agent = Agent(model=ScriptedModel(["hi"]), agent_hooks=[])
    result = agent("hello")
    assert result.stop_reason == "blocked"
    assert "host_error:no_interceptor" in (result.reason or "")


def test_import_tether_does_not_load_agent_hooks() -> None:
    import subprocess
    import sys

    code = "import sys, tether; assert not any(m.startswith('agent_hooks') or 'agent_hooks' in m for m in sys.modules), sorted(m for m in sys.modules if 'agent_hooks' in m)"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_host_class_stays_in_host_py_beside_the_points() -> None:
    """The points moved to points.py; AgentHooksHost stays in host.py, where the Agent
    looks for it without importing it (_agent_setup.is_agent_hooks_host)."""
    import sys

    from tether._agent_setup import is_agent_hooks_host
    from tether.control.agent_hooks import host, points

    assert AgentHooksHost.__module__ == "tether.control.agent_hooks.host"
    assert sys.modules["tether.control.agent_hooks.host"] is host
    assert is_agent_hooks_host(AgentHooksHost([]))
    assert host.HookSession is points.HookSession
