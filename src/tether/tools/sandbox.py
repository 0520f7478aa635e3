"""The pydantic-monty sandbox execute_code runs programs in: limits, the worker pool, errors.

A program runs in a monty worker subprocess (a Rust interpreter of a Python subset), never
in tether's interpreter. The blocking steps of a program (start, each resume after a host
call, the session's end) run on a thread of the program's own, so the event loop never
waits on the sandbox; the host answers each external call on the loop, between steps.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, TypeAlias, cast

from tether.errors import ConfigurationError, TetherError
from tether.tools.threads import ToolThreads

if TYPE_CHECKING:
    import pydantic_monty
    from pydantic_monty import ExternalResult


class CodeError(TetherError):
    """A program run by ``execute_code`` failed (syntax, runtime error, a limit); its
    message names the line, and goes back to the model as the tool's error."""


@dataclass(frozen=True, slots=True)
class CodeLimits:
    """Bounds on one ``execute_code`` program (every one is enforced, none can be off).

    ``time``: seconds of interpreter time (host tool calls do not count); ``memory``: bytes
    of sandbox heap; ``calls``: tool calls per program; ``output``: characters of printed
    output kept (the rest is cut, with a note); ``program``: characters of source;
    ``recursion``: call-stack depth.
    """

    time: float = 5.0
    memory: int = 64 * 1024 * 1024
    calls: int = 50
    output: int = 20_000
    program: int = 20_000
    recursion: int = 200
    arguments: int = 100_000

    def __post_init__(self) -> None:
        for name in ("time", "memory", "calls", "output", "program", "recursion", "arguments"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                raise ConfigurationError(
                    f"CodeLimits({name}=...) must be a positive number, got {value!r}"
                )
            if name != "time" and not isinstance(value, int):
                raise ConfigurationError(f"CodeLimits({name}=...) must be an int, got {value!r}")


@dataclass(frozen=True, slots=True)
class HostCall:
    """A tool call the program made: the function's name and its arguments."""

    name: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    line: int | None


Answer: TypeAlias = "ExternalResult"
"""What the sandbox gets back for a host call: ``{"return_value": v}`` or
``{"exc_type": "RuntimeError", "message": ...}`` (pydantic-monty's ExternalResult)."""


@dataclass(frozen=True, slots=True)
class Finished:
    """A program that ran to its end: its last expression's value as text (None: the
    value was None) and what it printed, each cut at the output limit."""

    value: str | None
    printed: str


OS_REFUSED = (
    "execute_code programs have no filesystem, network, environment or process access "
    "(and import only the standard modules the sandbox has)"
)


def refusal(exc_type: str, message: str) -> Answer:
    """The answer that raises ``exc_type(message)`` at the program's call."""
    return cast("Answer", {"exc_type": exc_type, "message": message})


class Sandbox:
    """A pool of monty worker processes, started on first use (at most ``workers``
    programs run at once; more wait for a free one). ``close()`` stops the workers; the
    next program starts them again.
    """

    def __init__(self, limits: CodeLimits, workers: int = 4) -> None:
        self.limits = limits
        self._workers = workers
        self._pool: pydantic_monty.Monty | None = None
        self._lock = threading.Lock()

    async def run(self, source: str, host: Callable[[HostCall], Awaitable[Answer]]) -> Finished:
        """Run ``source``, answering each external call with ``host`` (awaited on the loop).

        Raises CodeError when the program fails; whatever stops the caller (an interrupt,
        a cancel) ends the program too.
        """
        import pydantic_monty as monty

        limits = self.limits
        if len(source) > limits.program:
            raise CodeError(
                f"the program has {len(source)} characters; the limit is {limits.program}"
            )
        loop = asyncio.get_running_loop()
        # The program's own thread: its steps run in order there, and one waiting for a
        # free worker process never holds up another program's steps.
        threads = ToolThreads(1, thread_name_prefix="tether-sandbox")
        program = _Program(self._pool_now, limits, source)

        def step(fn: Callable[[], Any]) -> asyncio.Future[Any]:
            return threads.start(loop, partial(program.advance, fn))

        try:
            out = await step(program.start)
            while not isinstance(out, Finished):
                snap, call = out
                answer = await host(call)
                out = await step(partial(snap.resume, answer))
            return out
        except monty.MontyError as exc:
            raise CodeError(describe(exc, source, limits)) from None
        finally:
            threads.submit(program.end)
            threads.shutdown(wait=False)  # the thread ends once the session has

    def _pool_now(self) -> pydantic_monty.Monty:
        """The worker pool, started on first use (called on a sandbox thread)."""
        import pydantic_monty as monty

        with self._lock:
            if self._pool is None:
                pool = monty.Monty(
                    min_processes=1,
                    max_processes=self._workers,
                    # the parent's backstop: a worker past its limit by this much is killed
                    request_timeout=self.limits.time + 10.0,
                )
                pool.__enter__()
                self._pool = pool
            return self._pool

    def close(self) -> None:
        """Stop the workers and threads (a later program starts new ones)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.__exit__(None, None, None)


class _Program:
    """One program's session with a worker. Every method runs on the program's thread:
    what crosses from the sandbox (arguments, the value) is converted and bounded there,
    never on the event loop."""

    def __init__(
        self, pool: Callable[[], pydantic_monty.Monty], limits: CodeLimits, source: str
    ) -> None:
        self._pool = pool
        self._limits = limits
        self._source = source
        self._checkout: Any = None
        self._parts: list[str] = []
        self._kept = 0
        self._calls = 0

    def start(self) -> Any:
        limits = self._limits
        self._checkout = self._pool().checkout(
            script_name="program.py",
            limits={
                "max_feed_duration_secs": limits.time,
                "max_memory": limits.memory,
                "max_recursion_depth": limits.recursion,
                "max_suspensions": limits.calls + 100,  # OS calls and lookups count too
                "max_total_sleep_secs": limits.time,
            },
            os_policy={"sleep_system_max": limits.time},
        )
        session = self._checkout.__enter__()
        return session.feed_start(self._source, print_callback=self._print)

    def advance(self, step: Callable[[], Any]) -> tuple[Any, HostCall] | Finished:
        """Run ``step`` (the start, or a resume), answering what needs no host (OS calls,
        undefined names, bad arguments), up to the next tool call or the end."""
        import pydantic_monty as monty

        snap = step()
        while True:
            if isinstance(snap, monty.MontyComplete):
                return Finished(self._shown(snap.output), self.printed())
            if isinstance(snap, monty.FunctionSnapshot) and not snap.is_os_function:
                line = _line(self._source, snap.position)
                self._calls += 1
                if self._calls > self._limits.calls:
                    raise CodeError(
                        f"line {line}: more than {self._limits.calls} tool calls in one "
                        "program (CodeLimits(calls=...))"
                    )
                call = self._host_call(snap, line)
                if isinstance(call, HostCall):
                    return snap, call
                snap = snap.resume(refusal("TypeError", call))
            elif isinstance(snap, monty.FunctionSnapshot):
                snap = snap.resume(refusal("PermissionError", OS_REFUSED))
            elif isinstance(snap, monty.NameLookupSnapshot):
                snap = snap.resume()  # no value: the name is undefined (NameError)
            else:  # a FutureSnapshot: only async externals make one, and there are none
                raise CodeError("the program awaits something the sandbox cannot resolve")

    def _host_call(self, snap: Any, line: int | None) -> HostCall | str:
        """The call with JSON arguments (what a tool call carries), or why not."""
        name = str(snap.function_name)
        try:
            encoded = json.dumps([list(snap.args), dict(snap.kwargs)], allow_nan=False)
        except (TypeError, ValueError) as exc:
            return f"{name}(): the arguments must be JSON values ({exc})"
        if len(encoded) > self._limits.arguments:
            return (
                f"{name}(): the arguments take {len(encoded)} characters as JSON; the limit "
                f"is {self._limits.arguments} (CodeLimits(arguments=...))"
            )
        args, kwargs = json.loads(encoded)
        return HostCall(name, tuple(args), kwargs, line)

    def _shown(self, value: Any) -> str | None:
        """The last expression's value as the tool result shows it (None: it was None)."""
        if value is None:
            return None
        from tether.tools.output import format_tool_output

        return _cut(format_tool_output(value), self._limits.output)

    def _print(self, stream: str, text: str) -> None:
        """Keep printed output up to the limit (and one character more, to tell)."""
        room = self._limits.output + 1 - self._kept
        if room > 0:
            self._parts.append(text[:room])
            self._kept += min(len(text), room)

    def printed(self) -> str:
        return _cut("".join(self._parts), self._limits.output)

    def end(self) -> None:
        checkout, self._checkout = self._checkout, None
        if checkout is not None:
            checkout.__exit__(None, None, None)


def _cut(text: str, limit: int) -> str:
    if len(text) > limit:
        return text[:limit] + f"\n[tether: output cut at {limit} characters]"
    return text


def describe(exc: Exception, source: str, limits: CodeLimits) -> str:
    """A sandbox error as the model reads it: the line, the exception, the source line."""
    display = getattr(exc, "display", None)
    text = str(display("type-msg")) if callable(display) else str(exc)
    if text.startswith("TimeoutError") and "time limit" in text:
        return (
            f"the program ran past its time limit of {limits.time:g} s of interpreter time "
            "(CodeLimits(time=...)) and was stopped"
        )
    if text.startswith("MemoryError"):
        return f"the program went over its memory limit of {limits.memory} bytes and was stopped"
    frames = getattr(exc, "traceback", None)
    last = frames()[-1] if callable(frames) and frames() else None
    if last is None:
        return text
    shown = (last.source_line or "").strip()
    return f"line {last.line}: {text}" + (f"\n    {shown}" if shown else "")


def _line(source: str, position: Any) -> int | None:
    """The 1-based line of a snapshot's position (None when the worker gave none)."""
    start = getattr(position, "start", None)
    if not isinstance(start, int) or getattr(position, "filename", "") == "":
        return None
    return source.encode()[:start].count(b"\n") + 1
