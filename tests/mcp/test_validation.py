"""A server's input schema is untrusted: no $ref is fetched, patterns match under a bound."""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tether import Agent, Limits
from tether.errors import ToolArgumentError
from tether.mcp import MCPServer
from tether.mcp.validation import PATTERN_SECONDS, schema_validator
from tether.models import ScriptedModel

from .conftest import fixture_args

SECRET = "LOCAL-FILE-SECRET-42"
# The issue's pathological pattern (exponential backtracking in Python's re) and one that
# regex itself backtracks on; each with an argument of 27+ characters that fails to match.
REDOS = [(r"^(a+)+$", "a" * 27 + "!"), (r"^(a|a)*$", "a" * 30 + "!")]


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    path = tmp_path / "secret.json"
    path.write_text(json.dumps({"enum": [SECRET]}))
    return path


@pytest.fixture
def silent_listener() -> Iterator[str]:
    """A loopback TCP listener that accepts and never answers: its http:// URL."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/schema.json"
    stop.set()
    thread.join(5)
    for sock in held:
        sock.close()
    listener.close()


def validator(properties: dict[str, Any], **extra: Any) -> Any:
    schema = {"type": "object", "properties": properties, **extra}
    return schema_validator(schema, server="s", tool="t")


def refused(validate: Any, arguments: dict[str, Any], within: float = 5.0) -> str:
    """The ToolArgumentError message of ``validate(arguments)``, which must end in ``within`` s
    (in a thread: without the fix a fetch from a silent listener never returns)."""
    outcome: list[BaseException | dict[str, Any]] = []

    def run() -> None:
        try:
            outcome.append(validate(arguments, "t"))
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(within)
    assert outcome, f"validation did not finish within {within} s"
    (error,) = outcome
    assert isinstance(error, ToolArgumentError), error
    return str(error)


# -- $ref, at the validator -------------------------------------------------------------


def test_a_file_ref_is_not_read(secret_file: Path):
    message = refused(validator({"x": {"$ref": secret_file.as_uri()}}), {"x": "y"})
    assert SECRET not in message
    assert message.startswith(f"tool 't': its input schema refers to '{secret_file.as_uri()}'")
    assert "tether does not resolve (only references inside the schema itself" in message


def test_a_remote_ref_is_not_fetched(silent_listener: str):
    started = time.monotonic()
    message = refused(validator({"x": {"$ref": silent_listener}}), {"x": "y"})
    assert time.monotonic() - started < 1
    assert f"refers to '{silent_listener}' ($ref)" in message


def test_a_relative_ref_under_a_declared_file_id_is_not_read(secret_file: Path):
    validate = validator(
        {"x": {"$ref": secret_file.name}}, **{"$id": secret_file.parent.as_uri() + "/"}
    )
    message = refused(validate, {"x": "y"})
    assert SECRET not in message
    assert "does not resolve" in message


def test_a_ref_that_refers_to_itself_is_a_tool_error():
    validate = validator({"x": {"$ref": "#/$defs/a"}}, **{"$defs": {"a": {"$ref": "#/$defs/a"}}})
    assert refused(validate, {"x": 1}) == (
        "tool 't': its input schema's $ref refers to itself without end; this tool cannot be "
        "called until its server fixes the schema"
    )


def test_a_ref_to_nowhere_inside_the_schema_is_a_tool_error():
    message = refused(validator({"x": {"$ref": "#/$defs/missing"}}), {"x": 1})
    assert "refers to '#/$defs/missing' ($ref)" in message


def test_refs_inside_the_schema_validate_both_ways():
    validate = validator(
        {"x": {"$ref": "#/$defs/small"}, "tree": {"$ref": "#/$defs/node"}},
        **{
            "$defs": {
                "small": {"type": "integer", "maximum": 3},
                "node": {
                    "type": "object",
                    "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
                },
            }
        },
    )
    tree = {"kids": [{"kids": []}, {"kids": [{"kids": []}]}]}
    assert validate({"x": 2, "tree": tree}, "t") == {"x": 2, "tree": tree}
    assert (
        refused(validate, {"x": 7}) == "tool 't': argument 'x': 7 is greater than the maximum of 3"
    )
    message = refused(validate, {"tree": {"kids": [{"kids": 5}]}})
    assert message == "tool 't': argument 'tree.kids[0].kids': 5 is not of type 'array'"


# -- patterns, at the validator ---------------------------------------------------------


@pytest.mark.parametrize(("pattern", "text"), REDOS)
def test_a_pathological_pattern_ends_fast(pattern: str, text: str):
    validate = validator({"code": {"type": "string", "pattern": pattern}})
    started = time.monotonic()
    message = refused(validate, {"code": text})
    assert time.monotonic() - started < PATTERN_SECONDS + 0.5
    assert message in (
        f"tool 't': argument 'code': {text!r} does not match {pattern!r}",
        f"tool 't': matching an argument against the input schema's pattern {pattern!r} took "
        f"more than {PATTERN_SECONDS:g} s, so tether stopped it (the pattern backtracks without "
        "bound); send a shorter or simpler value",
    )


def test_the_bound_covers_all_the_matching_of_one_validation():
    validate = validator(
        {"codes": {"type": "array", "items": {"type": "string", "pattern": r"^(a|a)*$"}}}
    )
    started = time.monotonic()
    message = refused(validate, {"codes": ["a" * 30 + "!"] * 50})
    assert time.monotonic() - started < PATTERN_SECONDS + 0.5
    assert "took more than" in message


def test_pattern_properties_are_bounded_too():
    validate = validator(
        {}, patternProperties={r"^(a|a)*$": {"type": "integer"}}, additionalProperties=False
    )
    started = time.monotonic()
    assert "took more than" in refused(validate, {"a" * 30 + "!": 1})
    assert time.monotonic() - started < PATTERN_SECONDS + 0.5
    assert validate({"aaa": 1}, "t") == {"aaa": 1}
    assert (
        refused(validate, {"aaa": "x"}) == "tool 't': argument 'aaa': 'x' is not of type 'integer'"
    )
    assert (
        refused(validate, {"b": 1}) == "tool 't': 'b' does not match any of the regexes: '^(a|a)*$'"
    )


def test_unevaluated_properties_match_pattern_properties_under_the_bound():
    slow_key = "a" * 27 + "!"  # about 6 s in Python's re for this pattern
    validate = validator(
        {}, allOf=[{"patternProperties": {r"^(a+)+$": {}}}], unevaluatedProperties=False
    )
    started = time.monotonic()
    assert refused(validate, {slow_key: 1}) == (
        f"tool 't': Unevaluated properties are not allowed ({slow_key!r} was unexpected)"
    )
    assert time.monotonic() - started < PATTERN_SECONDS + 0.5
    assert validate({"aaa": 1}, "t") == {"aaa": 1}
    nested = validator(
        {}, allOf=[{"patternProperties": {r"^(a|a)*$": {}}}], unevaluatedProperties=False
    )
    assert "took more than" in refused(nested, {"a" * 30 + "!": 1})


def test_a_normal_pattern_validates_both_ways():
    validate = validator({"day": {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$"}})
    assert validate({"day": "2026-12-01"}, "t") == {"day": "2026-12-01"}
    assert refused(validate, {"day": "yesterday"}) == (
        "tool 't': argument 'day': 'yesterday' does not match '^\\\\d{4}-\\\\d{2}-\\\\d{2}$'"
    )
    closed = validator({"a": {"type": "integer"}}, additionalProperties=False)
    assert refused(closed, {"a": 1, "b": 2}) == (
        "tool 't': Additional properties are not allowed ('b' was unexpected)"
    )


# -- through a real MCP server ------------------------------------------------------------


def raw_server(*tools: dict[str, Any], **options: Any) -> MCPServer:
    env = {"FIXTURE_RAW": json.dumps({"tools": list(tools)})}
    return MCPServer.stdio(sys.executable, fixture_args("raw"), env=env, name="raw", **options)


def run_once(server: MCPServer, arguments: dict[str, Any], **limits: Any) -> tuple[Agent, Any]:
    def script(messages, specs):
        if messages[-1].role == "user":
            return {"tool_calls": [{"name": "lookup", "args": arguments}]}
        return "done"

    agent = Agent(ScriptedModel(script), tools=[server], store=None, limits=Limits(**limits))
    return agent, agent.run("go")


def lookup(schema: dict[str, Any]) -> dict[str, Any]:
    return {"name": "lookup", "inputSchema": {"type": "object", **schema}}


def test_through_a_server_a_file_ref_reaches_no_one(secret_file: Path):
    with raw_server(lookup({"properties": {"x": {"$ref": secret_file.as_uri()}}})) as server:
        agent, result = run_once(server, {"x": "y"})
    assert result.stop_reason == "end_turn"
    (tool_result,) = [r for m in agent.messages for r in m.tool_results]
    assert tool_result.is_error
    assert "its input schema refers to" in tool_result.content
    assert SECRET not in repr(agent.messages)


def test_through_a_server_a_ref_to_a_silent_listener_does_not_freeze_the_run(silent_listener: str):
    with raw_server(
        lookup({"properties": {"x": {"$ref": silent_listener}}}), call_timeout=5
    ) as server:
        server.tools()
        started = time.monotonic()
        agent, result = run_once(server, {"x": "y"}, wall_seconds=3)
        took = time.monotonic() - started
    assert took < 2
    assert result.stop_reason == "end_turn"
    (tool_result,) = [r for m in agent.messages for r in m.tool_results]
    assert f"refers to '{silent_listener}' ($ref)" in tool_result.content


def test_through_a_server_a_pathological_pattern_is_a_clear_tool_error():
    pattern, text = REDOS[1]
    schema = lookup({"properties": {"code": {"type": "string", "pattern": pattern}}})
    with raw_server(schema) as server:
        server.tools()
        started = time.monotonic()
        agent, result = run_once(server, {"code": text})
        took = time.monotonic() - started
        ok_agent, _ = run_once(server, {"code": "aaaa"})
    assert took < 2
    assert result.stop_reason == "end_turn"
    (tool_result,) = [r for m in agent.messages for r in m.tool_results]
    assert tool_result.is_error
    assert "took more than" in tool_result.content
    (ok,) = [r for m in ok_agent.messages for r in m.tool_results]
    assert not ok.is_error
    assert json.loads(ok.content)["arguments"] == {"code": "aaaa"}
