"""The opt-in ``execute_code`` tool: the model writes a short Python program that calls the
agent's tools as functions; it runs in the pydantic-monty sandbox (tools/sandbox.py).

Each call the program makes is a tool call of the agent, run by the loop's own one-call
path (``tether.toolcall.process_call``): hooks, interventions, AGENT-HOOKS, Confirm,
audit and tracing see it as they see a call the model makes. Its id is the outer call's
id and its ordinal (``c1/2``: the program's second call, made by call ``c1``).

A Confirm (any interrupt) inside the program suspends the whole program. On resume the
program runs again from the start; the calls that finished before are answered from
the record kept with the session (they never run twice), and a call whose recorded
name or arguments differ from what the program now asks is refused.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tether.control.interrupts import InterruptSignal
from tether.errors import ConfigurationError
from tether.messages import ToolCall, ToolResult
from tether.tools.base import Tool
from tether.tools.context import ToolContext
from tether.tools.sandbox import CodeError, CodeLimits, HostCall, Sandbox, refusal

if TYPE_CHECKING:
    from tether.run_state import RunState
    from tether.tools.sandbox import Answer

EXECUTE_CODE = "execute_code"
CODE_KEY = "__tether_execute_code__"
"""Session-state key of the record of finished inner calls, per running program: kept
while a program may be re-run (it suspended), dropped when the program ends."""


def execute_code(
    tools: Sequence[Tool | str], name: str = EXECUTE_CODE, limits: CodeLimits | None = None
) -> ExecuteCode:
    """The opt-in ``execute_code`` tool: the model's Python program calls ``tools`` as
    functions in the pydantic-monty sandbox, each call through the agent's full tool path.

    ``tools``: Tool objects (offered to the model too: this is a tool source) or names
    of tools the agent has from elsewhere. ``limits``: the program's bounds
    (:class:`~tether.tools.sandbox.CodeLimits`; the defaults hold without it).
    ``Agent(tools=[execute_code(tools=[lookup, add])])``.
    """
    return ExecuteCode(tools, name=name, limits=limits)


class ExecuteCode:
    """A tool source: the ``execute_code`` tool, plus the tools its programs may call that
    were given as Tool objects (names refer to tools the agent has from elsewhere)."""

    def __init__(
        self,
        tools: Sequence[Tool | str],
        *,
        name: str = EXECUTE_CODE,
        limits: CodeLimits | None = None,
    ) -> None:
        from tether.tools.decorator import as_tool

        if isinstance(tools, str | Tool) or not tools:
            raise ConfigurationError(
                "execute_code(tools=[...]) takes a non-empty list of the tools (or tool "
                "names) its programs may call"
            )
        self.limits = limits if limits is not None else CodeLimits()
        if not isinstance(self.limits, CodeLimits):
            raise ConfigurationError(
                f"execute_code(limits=...) takes a CodeLimits, got {type(limits).__name__}"
            )
        self.given: list[Tool] = [as_tool(t) for t in tools if not isinstance(t, str)]
        self.names: tuple[str, ...] = tuple(t if isinstance(t, str) else t.name for t in tools)
        if len(set(self.names)) != len(self.names) or name in self.names:
            raise ConfigurationError(
                f"execute_code(tools=...): tool names must be unique and not {name!r}: "
                f"{', '.join(self.names)}"
            )
        if not _installed("pydantic_monty"):
            raise ConfigurationError(
                "execute_code runs programs in pydantic-monty, which is not installed: "
                "pip install 'tether[code]' (or pydantic-monty)"
            )
        self.sandbox = Sandbox(self.limits)
        self.tool = _CodeTool(self, name)

    def tools(self) -> list[Tool]:
        return [self.tool, *self.given]

    def close(self) -> None:
        self.sandbox.close()

    def __repr__(self) -> str:
        return f"execute_code(tools={list(self.names)!r})"


class _CodeTool(Tool):
    def __init__(self, source: ExecuteCode, name: str) -> None:
        self.source = source

        async def execute_code(code: str, context: ToolContext) -> str:
            return await self._execute(code, context)

        # Idempotent by construction: a re-run answers finished calls from the record.
        # Cheap: a turn that only runs programs gives its iteration back (refund_cheap).
        Tool.__init__(
            self,
            execute_code,
            name=name,
            description=_describe(source),
            idempotent=True,
            cheap=True,
        )

    async def _execute(self, code: str, context: ToolContext) -> str:
        run: RunState | None = context.agent.conversation.run
        if run is None:
            raise CodeError("execute_code runs only inside an agent's run")
        program = _Calls(self.source, run, context)
        try:
            finished = await self.source.sandbox.run(code, program.host)
        except InterruptSignal:
            program.suspend()
            raise
        except BaseException:
            program.forget()
            raise
        program.forget()
        return _result(finished.printed, finished.value)


class _Calls:
    """The inner calls of one run of a program, and their record in the session state."""

    def __init__(self, source: ExecuteCode, run: RunState, context: ToolContext) -> None:
        self.source = source
        self.run = run
        self.context = context
        outer = context.tool_call
        self.outer = outer
        self.key = f"{run.batch_position}:{outer.id}"
        record = _record_in(context.state, self.key)
        self.done: list[dict[str, Any]] = list(record["done"]) if record else []
        self.cut: int | None = record.get("started") if record else None
        """The ordinal of a call that started and never finished (a crash cut it off)."""
        self.made = 0

    async def host(self, call: HostCall) -> Answer:
        self.made += 1
        ordinal = self.made
        if call.name not in self.source.names:
            return refusal("NameError", f"name {call.name!r} is not defined")
        arguments = self._arguments(call)
        if isinstance(arguments, str):
            return refusal("TypeError", arguments)
        if ordinal <= len(self.done):  # finished before a suspension: answer, never re-run
            kept = self.done[ordinal - 1]
            if kept["name"] != call.name or kept["arguments"] != arguments:
                return refusal(
                    "RuntimeError",
                    f"call {ordinal} of the re-run program is {call.name}(...), but the "
                    f"first run's call {ordinal} was {kept['name']}(...) with other "
                    "arguments; a program re-run after a suspension must make the same calls "
                    "(not run)",
                )
            return _answer(kept["content"], kept["is_error"])
        inner = ToolCall(f"{self.outer.id}/{ordinal}", call.name, arguments)
        tool = self.run.runtime.toolset.by_name.get(call.name)
        if ordinal == self.cut and not (tool is not None and tool.idempotent):
            result = ToolResult(
                inner.id,
                inner.name,
                f"Error: a crash cut off call {ordinal} ({call.name}) while it ran: it may or "
                "may not have happened, so it is not run again; check before calling it again",
                is_error=True,
                status="error",
            )
        else:
            from tether.toolcall import process_call

            await self._keep(started=ordinal)  # rides with the call's journaled intent
            result = await process_call(self.run, inner, None)
        await self._record(inner, result)
        # the program's progress, live in the stream: one report per finished call
        self.context.progress(ordinal, message=f"{inner.id} {inner.name}: {result.status}")
        return _answer(result.content, result.is_error)

    def _arguments(self, call: HostCall) -> dict[str, Any] | str:
        """The call's arguments by name (positional ones take the schema's order)."""
        tool = self.run.runtime.toolset.by_name.get(call.name)
        names = list((tool.input_schema.get("properties") or {}) if tool is not None else [])
        if len(call.args) > len(names):
            return f"{call.name}() takes at most {len(names)} positional arguments"
        arguments = dict(zip(names, call.args, strict=False))
        for key, value in call.kwargs.items():
            if key in arguments:
                return f"{call.name}() got multiple values for argument {key!r}"
            arguments[key] = value
        return arguments

    async def _record(self, call: ToolCall, result: ToolResult) -> None:
        """Keep the finished call with the session; journal its result under the outer
        call (one append, with the session state that holds the record)."""
        self.done.append(
            {
                "name": call.name,
                "arguments": call.arguments,
                "content": result.content,
                "is_error": result.is_error,
            }
        )
        await self._keep()
        journal = self.run.journal
        if journal is not None:
            from tether.journal_fold import result_dict

            await journal.append("tool_result", {"result": result_dict(result)})

    async def _keep(self, started: int | None = None) -> None:
        """Put the record in the session state; queue its journal entry (it goes out
        with the next append: the inner call's intent, or its result)."""
        record: dict[str, Any] = {"done": self.done}
        if started is not None:
            record["started"] = started
        state = self.context.state
        state.setdefault(CODE_KEY, {})[self.key] = record
        if self.run.journal is not None:
            await self.run.journal.state_if_changed(state)

    def suspend(self) -> None:
        """The program stopped at an interrupt (the call that raised it did not run, or
        runs again by the interrupt rule): keep the record for the re-run."""
        self.context.state.setdefault(CODE_KEY, {})[self.key] = {"done": self.done}

    def forget(self) -> None:
        saved = self.context.state.get(CODE_KEY)
        if isinstance(saved, dict):
            saved.pop(self.key, None)
            if not saved:
                self.context.state.pop(CODE_KEY, None)


def _installed(module: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except ValueError:  # in sys.modules as None: importing it fails
        return False


_DONE_KEYS = {"name", "arguments", "content", "is_error"}


def _record_in(state: dict[str, Any], key: str) -> dict[str, Any] | None:
    """The record of the program run by call ``key``, checked (None: there is none)."""
    saved = state.get(CODE_KEY)
    record: Any = saved.get(key) if isinstance(saved, dict) else None
    if saved is None or record is None:
        return None
    done = record.get("done") if isinstance(record, dict) else None
    started = record.get("started") if isinstance(record, dict) else None
    if (
        not isinstance(done, list)
        or not all(isinstance(d, dict) and d.keys() >= _DONE_KEYS for d in done)
        or not (started is None or type(started) is int)
    ):
        raise CodeError(
            f"the session state's {CODE_KEY!r} entry for call {key!r} is not a record of "
            "finished calls; the program did not run (remove the entry to run it afresh)"
        )
    return dict(record)


def _answer(content: str, is_error: bool) -> Answer:
    """A tool's result as the program sees it: JSON text arrives as its value, other text
    as a str; an error result (a denial, a failure) raises RuntimeError at the call."""
    if is_error:
        return refusal("RuntimeError", content)
    try:
        return {"return_value": json.loads(content)}
    except ValueError:
        return {"return_value": content}


def _result(printed: str, value: str | None) -> str:
    printed = printed.rstrip("\n")
    if value is None:
        return printed if printed else "(the program printed nothing and returned None)"
    return f"{printed}\n{value}" if printed else value


def _describe(source: ExecuteCode) -> str:
    functions = []
    for name in source.names:
        tool = next((t for t in source.given if t.name == name), None)
        if tool is None:
            functions.append(f"- {name}(...): the agent's {name} tool")
            continue
        params = ", ".join((tool.input_schema.get("properties") or {}).keys())
        summary = tool.description.strip().splitlines()[0] if tool.description.strip() else ""
        functions.append(f"- {name}({params}): {summary}".rstrip(": "))
    limits = source.limits
    return (
        "Run a short Python program (a subset of Python, in a sandbox: no files, network or "
        "imports beyond the standard modules it has) that calls these tools as functions, "
        "with keyword or positional arguments:\n"
        + "\n".join(functions)
        + "\nA tool's JSON result arrives as its value, other text as a str; a failed or "
        "denied call raises RuntimeError. What the program prints, then its last "
        f"expression's value, is the result. Limits: {limits.time:g} s of interpreter time, "
        f"{limits.calls} tool calls, {limits.output} characters of output."
    )
