"""The promise of errors.py: every exception tether raises is a TetherError.

Two checks: a walk over every ``raise`` in the source (outside ops/, whose CLI
exits are typer's), and each documented bad input driven through the public API.
"""

from __future__ import annotations

import ast
import asyncio
import builtins
import importlib
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import tether
from tether import (
    Agent,
    AnswerError,
    ConfigurationError,
    Execution,
    InputError,
    Limits,
    TetherError,
    tool,
)
from tether.control import BeforeToolCall, Confirm, InterventionHandler
from tether.durable import MemoryStore, SQLiteStore
from tether.models import ScriptedModel

SRC = Path(tether.__file__).parent

# Python protocols kept on purpose (docs/design.md, "Errors"): a module's lazy
# __getattr__ must raise AttributeError; a mapping's __missing__ raises KeyError; an
# abstract method raises NotImplementedError;
# an async iterator's __anext__ ends with StopAsyncIteration.
PROTOCOL = {
    "AttributeError": "__getattr__",
    "KeyError": "__missing__",  # a dict subclass's lookup protocol (tools/refresh.py)
    "NotImplementedError": None,
    "StopAsyncIteration": "__anext__",
    "TimeoutError": "invoke",  # Tool.invoke's contract: past the tool's timeout (tether.temporal)
}
CONTROL_FLOW = {"StopRun", "InterruptSignal", "MayHaveRun"}  # MayHaveRun: tether.temporal


def _raised_names(tree: ast.AST) -> list[tuple[int, str, str | None]]:
    """(line, exception class name, enclosing function) of every ``raise`` of a class, or
    of a helper that builds one (``raise _incomplete(...)``: its return annotation)."""
    helpers = {
        node.name: ast.unparse(node.returns)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns is not None
    }
    found: list[tuple[int, str, str | None]] = []

    def visit(node: ast.AST, function: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            inner = function
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                inner = child.name
            if isinstance(child, ast.Raise) and isinstance(child.exc, ast.Call):
                func = child.exc.func
                name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
                owner = getattr(func, "value", None)
                if isinstance(owner, ast.Name) and owner.id[:1].isupper():
                    name = owner.id  # Class.constructor(...), e.g. InterruptSignal.joined
                if name[:1].isupper():
                    found.append((child.lineno, name, function))
                elif name:  # a helper: what it is annotated to return
                    found.append(
                        (child.lineno, helpers.get(name, f"<unannotated {name}>"), function)
                    )
            elif (
                isinstance(child, ast.Raise)
                and isinstance(child.exc, ast.Name)
                and child.exc.id[:1].isupper()
            ):
                found.append((child.lineno, child.exc.id, function))
            visit(child, inner)

    visit(tree, None)
    return found


def _anywhere(name: str) -> object:
    """A class imported inside a function: find it in any loaded tether module."""
    for module_name, module in list(sys.modules.items()):
        if module_name.startswith("tether.") and isinstance(getattr(module, name, None), type):
            return getattr(module, name)
    return None


def test_every_raise_in_the_source_is_a_tether_error() -> None:
    offenders: list[str] = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith("ops/"):
            continue
        if rel.startswith("a2a/"):  # a protocol host: it answers in its protocol's errors
            continue  # (A2AError, HTTPException), as ops/server answers in HTTP's
        module_name = "tether." + rel[:-3].replace("/", ".").removesuffix(".__init__")
        module = importlib.import_module(module_name)
        for line, name, function in _raised_names(ast.parse(path.read_text())):
            if name in CONTROL_FLOW:
                continue
            if name == "HTTPException" and rel.startswith("ag_ui/"):
                continue  # an HTTP endpoint's refusal, as in ops/server
            if name == "ApplicationError" and rel.startswith("temporal/"):
                continue  # how an activity, a workflow or an Update tells Temporal it failed
            if name in PROTOCOL and PROTOCOL[name] in (None, function):
                continue
            cls = getattr(module, name, None) or getattr(builtins, name, None) or _anywhere(name)
            if not (isinstance(cls, type) and issubclass(cls, TetherError)):
                offenders.append(f"{rel}:{line}: raise {name}")
    assert offenders == []


def _confirming_agent(**options: Any) -> Agent:
    @tool
    def transfer(to: str, amount: int) -> str:
        """Send money."""
        return f"sent {amount} to {to}"

    class Ask(InterventionHandler):
        def before_tool_call(self, event: BeforeToolCall) -> Confirm:
            return Confirm("send it?")

    turns = [{"tool_calls": [{"name": "transfer", "args": {"to": "bob", "amount": 5}}]}, "done"]
    return Agent(model=ScriptedModel(turns), tools=[transfer], interventions=[Ask()], **options)


def _suspended() -> tuple[Agent, str]:
    agent = _confirming_agent()
    result = agent("pay bob")
    assert result.stop_reason == "interrupt"
    return agent, result.interrupts[0].id


class Opaque:
    pass


def _f(x: int) -> int:
    """Echo."""
    return x


def _bad_param_tool() -> None:
    @tool
    def lookup(key: str, where: Opaque) -> str:
        """Look up."""
        return key


def _resume_unknown_id() -> None:
    agent, _ = _suspended()
    agent.resume({"nope": "approve"})


def _resume_bad_confirm() -> None:
    agent, iid = _suspended()
    agent.resume({iid: "maybe"})


def _resume_bad_edit() -> None:
    agent, iid = _suspended()
    agent.resume({iid: {"approved": True, "args": {"amount": "lots"}}})


def _resume_non_json() -> None:
    agent, iid = _suspended()
    agent.resume({iid: object()})


def _two_hosts() -> None:
    from tether.control.agent_hooks import AgentHooksHost

    host = AgentHooksHost([lambda ctx: {"decision": "allow"}])
    Agent(model=ScriptedModel(["x"]), agent_hooks=host)
    Agent(model=ScriptedModel(["x"]), agent_hooks=host)


def _second_host_through_add_provider() -> None:
    from tether.control.agent_hooks import AgentHooksHost

    agent = Agent(model=ScriptedModel(["x"]), agent_hooks=[lambda ctx: {"decision": "allow"}])
    agent.hooks.add_provider(AgentHooksHost([lambda ctx: {"decision": "allow"}]))


def _host_in_hooks() -> None:
    from tether.control.agent_hooks import AgentHooksHost

    Agent(model=ScriptedModel(["x"]), hooks=[AgentHooksHost([])])


# (what, the call, the exception type, words the message must contain)
BAD_INPUTS: list[tuple[str, Callable[[], Any], type[TetherError], list[str]]] = [
    ("no model", lambda: Agent(), ConfigurationError, ["needs a model", "TETHER_MODEL"]),
    (
        "store as a path string",
        lambda: Agent(model=ScriptedModel(["x"]), store="sessions.db", session_id="s"),  # type: ignore[arg-type]
        ConfigurationError,
        ["store=", "'sessions.db'", "SQLiteStore('sessions.db')"],
    ),
    (
        "store of the wrong type",
        lambda: Agent(model=ScriptedModel(["x"]), store=42),  # type: ignore[arg-type]
        ConfigurationError,
        ["store=", "int"],
    ),
    (
        "empty session id",
        lambda: Agent(model=ScriptedModel(["x"]), session_id="", store=MemoryStore()),
        ConfigurationError,
        ["the session id is empty", "1 to 256 characters"],
    ),
    (
        "session id with a lone surrogate",
        lambda: Agent(model=ScriptedModel(["x"]), session_id="a\udc80b", store=MemoryStore()),
        ConfigurationError,
        ["session id 'a\\udc80b'", "a lone surrogate"],
    ),
    (
        "session id too long",
        lambda: Agent(model=ScriptedModel(["x"]), session_id="x" * 10_000, store=MemoryStore()),
        ConfigurationError,
        ["10000 characters long", "1 to 256 characters"],
    ),
    (
        "session id with control characters",
        lambda: Agent(model=ScriptedModel(["x"]), session_id="a\x1b[2Jb", store=MemoryStore()),
        ConfigurationError,
        ["a control character (U+001B at position 1)"],
    ),
    (
        "unsupported tool parameter type",
        _bad_param_tool,
        ConfigurationError,
        ["tool 'lookup'", "parameter 'where'", "Opaque", "Supported types"],
    ),
    (
        "duplicate tool names",
        lambda: Agent(model=ScriptedModel(["x"]), tools=[tool(name="t")(_f), tool(name="t")(_f)]),
        ConfigurationError,
        ["two tools are named 't'"],
    ),
    (
        "bad Execution knob",
        lambda: Execution(max_concurrency=0),
        ConfigurationError,
        ["Execution(max_concurrency=...)", "0"],
    ),
    (
        "execution of the wrong type",
        lambda: Agent(model=ScriptedModel(["x"]), execution={"max_retries": 1}),  # type: ignore[arg-type]
        ConfigurationError,
        ["execution=", "dict"],
    ),
    ("bad limit", lambda: Limits(turns=0), ConfigurationError, ["Limits(turns=...)", "0"]),
    (
        "bad prompt",
        lambda: Agent(model=ScriptedModel(["x"]))(42),  # type: ignore[arg-type]
        InputError,
        ["prompt", "int"],
    ),
    ("unknown interrupt id", _resume_unknown_id, AnswerError, ["unknown interrupt id", "'nope'"]),
    ("malformed Confirm answer", _resume_bad_confirm, AnswerError, ["Confirm response", "'maybe'"]),
    ("invalid edited arguments", _resume_bad_edit, AnswerError, ["edited arguments", "amount"]),
    ("non-JSON answer", _resume_non_json, AnswerError, ["not JSON-serializable"]),
    (
        "a second AGENT-HOOKS attach",
        _two_hosts,
        ConfigurationError,
        ["already attached", "a host serves one agent", "new AgentHooksHost"],
    ),
    (
        "a second AGENT-HOOKS host through hooks.add_provider",
        _second_host_through_add_provider,
        ConfigurationError,
        ["already attached", "a host serves one agent", "new AgentHooksHost"],
    ),
    (
        "an AGENT-HOOKS host in hooks=",
        _host_in_hooks,
        ConfigurationError,
        ["AgentHooksHost", "agent_hooks="],
    ),
    # Each Agent(...) argument of the wrong type fails at construction, naming the
    # parameter, what was given and what it takes (issue 21: some failed at the first run).
    *[
        (
            f"{param} of the wrong type",
            (lambda kw: lambda: Agent(model=ScriptedModel(["x"]), **kw))({param: value}),
            ConfigurationError,
            [f"{param}=", given, expected],
        )
        for param, value, given, expected in [
            ("limits", "20 turns", "str", "Limits(...)"),
            ("budget", 50, "int (50)", "IterationBudget"),
            ("confirm", "yes", "str ('yes')", "callable"),
            ("system_prompt", 5, "int (5)", "a str or None"),
            ("tools", 5, "int (5)", "a list of tools"),
            ("hooks", 5, "int (5)", "HookProvider"),
            ("interventions", 5, "int (5)", "InterventionHandler"),
            ("middleware", 5, "int (5)", "ModelMiddleware"),
            ("state", [1], "list", "a dict"),
            ("approvals", "x", "str ('x')", "ApprovalPolicy"),
        ]
    ],
    (
        "approvals of the wrong type with a store",
        lambda: Agent(model=ScriptedModel(["x"]), approvals="x", store=MemoryStore()),  # type: ignore[arg-type]
        ConfigurationError,
        ["approvals=", "str ('x')", "ApprovalPolicy(...)"],
    ),
    (
        "name of the wrong type",
        lambda: Agent(model=ScriptedModel(["x"]), name=5),  # type: ignore[arg-type]
        ConfigurationError,
        ["agent's name", "'5'"],
    ),
    (
        "agent.name set to a bad name",
        lambda: setattr(Agent(model=ScriptedModel(["x"])), "name", "a\x1b[2J"),
        ConfigurationError,
        ["agent's name", "1 to 64"],
    ),
    (
        "session id of the wrong type",
        lambda: Agent(model=ScriptedModel(["x"]), session_id=5),  # type: ignore[arg-type]
        ConfigurationError,
        ["session id 5", "not a string (int)"],
    ),
    (
        "model of the wrong type",
        lambda: Agent(model=5),  # type: ignore[arg-type]
        ConfigurationError,
        ["model must be a Model", "int"],
    ),
    (
        "agent_hooks of the wrong type",
        lambda: Agent(model=ScriptedModel(["x"]), agent_hooks="allow-all"),
        ConfigurationError,
        ["agent_hooks=", "str"],
    ),
]


@pytest.mark.parametrize(
    ("call", "error", "words"), [case[1:] for case in BAD_INPUTS], ids=[c[0] for c in BAD_INPUTS]
)
def test_each_documented_bad_input_is_a_tether_error_naming_the_fault(
    call: Callable[[], Any], error: type[TetherError], words: list[str]
) -> None:
    with pytest.raises(error) as info:
        call()
    assert isinstance(info.value, TetherError)
    for word in words:
        assert word in str(info.value)


def test_a_refused_answer_changes_nothing() -> None:
    agent, iid = _suspended()
    before = [m.to_dict() for m in agent.messages]
    with pytest.raises(AnswerError):
        agent.resume({iid: {"approved": True, "args": {"amount": "lots"}}})
    assert [m.to_dict() for m in agent.messages] == before
    assert [i.id for i in agent.pending_interrupts] == [iid]
    assert agent.resume({iid: "approve"}).text == "done"


def test_bad_input_errors_keep_their_builtin_bases() -> None:
    assert issubclass(ConfigurationError, ValueError)
    assert issubclass(ConfigurationError, TypeError)
    assert issubclass(AnswerError, ValueError)
    with pytest.raises(TypeError):
        _bad_param_tool()


def _formatted(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc))


def test_sync_facade_errors_carry_no_event_loop_context() -> None:
    with pytest.raises(TetherError) as info:
        _resume_unknown_id()
    assert info.value.__context__ is None
    assert "no running event loop" not in _formatted(info.value)
    agent = Agent(model=ScriptedModel(["x"]))
    with pytest.raises(InputError) as run_info:
        agent(42)  # type: ignore[arg-type]
    assert "no running event loop" not in _formatted(run_info.value)


async def test_sync_facade_inside_a_running_loop_has_clean_errors_too() -> None:
    agent = Agent(model=ScriptedModel(["x"]))
    with pytest.raises(InputError) as info:
        await asyncio.to_thread(agent.run, 42)  # type: ignore[arg-type]
    assert "no running event loop" not in _formatted(info.value)


def test_a_store_path_string_leaves_no_file_behind(tmp_path: Path) -> None:
    target = tmp_path / "sessions.db"
    with pytest.raises(ConfigurationError):
        Agent(model=ScriptedModel(["x"]), store=str(target), session_id="s")  # type: ignore[arg-type]
    assert not target.exists()
    agent = Agent(model=ScriptedModel(["ok"]), store=SQLiteStore(str(target)), session_id="s")
    assert agent("hi").text == "ok"


def test_every_core_error_is_exported_from_tether() -> None:
    """Every exception class errors.py defines can be caught as ``tether.<Name>``."""
    import tether.errors as errors

    defined = {
        name
        for name, value in vars(errors).items()
        if isinstance(value, type)
        and issubclass(value, TetherError)
        and value.__module__ == "tether.errors"
    }
    missing = sorted(defined - set(tether.__all__))
    assert missing == []
    for name in defined:
        assert getattr(tether, name) is getattr(errors, name)
