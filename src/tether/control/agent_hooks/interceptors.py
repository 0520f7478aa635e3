"""Interceptor adapters and the host's AgentContext type (used by host.py)."""

from __future__ import annotations

import copy
import inspect
import marshal
import time
from collections.abc import Callable
from typing import Any

from agent_hooks import AgentContext, Interceptor

from tether.errors import ConfigurationError, InterceptorTimeout


class _Callable:
    """Adapts a plain function ``context -> verdict`` to the Interceptor protocol."""

    __slots__ = ("fn", "name")

    def __init__(self, fn: Callable[[AgentContext], Any]) -> None:
        self.fn = fn
        self.name = getattr(fn, "__qualname__", None) or repr(fn)

    def intercept(self, context: AgentContext) -> Any:
        return self.fn(context)


class Context(dict[str, Any]):
    """An AgentContext (a plain JSON object) whose deep copy is JSON-specialized.

    The emitter gives each interceptor ``copy.deepcopy(context)`` (isolation,
    spec section 7). A context of plain dicts, lists and scalars (what the builder
    makes) is copied by a ``marshal`` round trip: one pass in C, several times
    faster than ``copy.deepcopy`` on a long history, with the same result: plain
    dicts and lists, and a value the context holds twice (``target`` is
    ``messages`` at ``pre_model_call``) stays one object in the copy. Anything
    marshal refuses (another type anywhere in the context) takes a recursive copy
    that falls back to ``copy.deepcopy`` for what is not JSON.
    """

    __slots__ = ()

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        try:
            return marshal.loads(marshal.dumps(dict(self)))  # type: ignore[no-any-return]
        except ValueError:  # a value of another type (or nested too deeply for marshal)
            pass
        copies: dict[int, Any] = {}
        out: dict[str, Any] = {}
        for key, value in self.items():
            found = copies.get(id(value))
            if found is None:
                found = copies[id(value)] = _copy(value)
            out[key] = found
        return out


def _copy(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        return {k: _copy(v) for k, v in value.items()}
    if kind is list:
        return [_copy(v) for v in value]
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    return copy.deepcopy(value)


class AllowAll:
    """An explicit allow-all interceptor (a deliberate passthrough: zero interceptors deny)."""

    name = "allow-all"

    def intercept(self, context: AgentContext) -> dict[str, str]:
        return {"decision": "allow"}


class Bounded:
    """A synchronous interceptor past ``timeout`` fails closed as a timeout.

    The emitter can only preempt awaitables; a blocking ``intercept`` cannot be
    stopped, but its verdict is discarded (InterceptorTimeout, a TimeoutError -> interceptor_timeout).
    """

    __slots__ = ("inner", "name", "timeout")

    def __init__(self, inner: Interceptor, timeout: float) -> None:
        self.inner = inner
        self.timeout = timeout
        self.name = getattr(inner, "name", None)

    def intercept(self, context: AgentContext) -> Any:
        started = time.perf_counter()
        verdict = self.inner.intercept(context)
        if time.perf_counter() - started > self.timeout and not inspect.isawaitable(verdict):
            raise InterceptorTimeout(f"interceptor ran longer than {self.timeout:g} s")
        return verdict


def as_interceptor(value: Any) -> Interceptor:
    """An interceptor object (with ``intercept``) or a callable; anything else is refused."""
    if callable(getattr(value, "intercept", None)):
        return value  # type: ignore[no-any-return]
    if callable(value):
        return _Callable(value)
    raise ConfigurationError(
        f"agent_hooks=[...] takes interceptor objects with intercept(context) or callables, got {value!r}"
    )
