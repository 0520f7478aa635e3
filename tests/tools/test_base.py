import asyncio
import contextvars
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, cast

import pytest

from tether.messages import ToolCall
from tether.tools import CancelSignal, Tool, ToolContext, tool

request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="unset")


def make_context() -> ToolContext:
    return ToolContext(ToolCall("call-1", "t"), cast(Any, None), {"k": "v"}, CancelSignal())


@tool
async def add(a: int, b: int) -> int:
    return a + b


async def test_async_tool_runs_on_the_loop() -> None:
    assert await add.invoke(add.prepare({"a": "1", "b": 2})) == 3


async def test_sync_tool_runs_in_the_given_executor() -> None:
    @tool
    def where() -> str:
        return threading.current_thread().name

    with ThreadPoolExecutor(1, thread_name_prefix="tool-pool") as pool:
        name = await where.invoke({}, None, pool)
    assert name.startswith("tool-pool")
    assert name != threading.main_thread().name


async def test_sync_tool_uses_the_default_executor_without_one() -> None:
    @tool
    def where() -> int:
        return threading.get_ident()

    assert await where.invoke({}) != threading.get_ident()


async def test_sync_tool_sees_contextvars() -> None:
    @tool
    def current() -> str:
        return request_id.get()

    request_id.set("r-7")
    assert await current.invoke({}) == "r-7"


async def test_context_is_injected() -> None:
    @tool
    def state_of(key: str, ctx: ToolContext) -> str:
        return f"{ctx.tool_call_id}:{ctx.state[key]}"

    @tool
    async def async_state_of(key: str, ctx: ToolContext) -> str:
        return str(ctx.state[key])

    context = make_context()
    assert await state_of.invoke(state_of.prepare({"key": "k"}), context) == "call-1:v"
    assert await async_state_of.invoke({"key": "k"}, context) == "v"


async def test_missing_context_is_a_clear_error() -> None:
    @tool
    def needs(ctx: ToolContext) -> None: ...

    with pytest.raises(TypeError, match=r"tool 'needs' declares a ToolContext parameter \('ctx'\)"):
        await needs.invoke({})


async def test_context_parameter_is_not_an_argument_the_model_can_send() -> None:
    @tool
    def needs(ctx: ToolContext) -> None: ...

    from tether.errors import ToolArgumentError

    with pytest.raises(ToolArgumentError, match="unexpected argument 'ctx'"):
        needs.prepare({"ctx": {}})


async def test_async_timeout() -> None:
    @tool(timeout=0.01)
    async def hang() -> None:
        await asyncio.sleep(10)

    with pytest.raises(TimeoutError):
        await hang.invoke({})


async def test_sync_timeout() -> None:
    release = threading.Event()

    @tool(timeout=0.01)
    def hang() -> None:
        release.wait(10)

    try:
        with pytest.raises(TimeoutError):
            await hang.invoke({})
    finally:
        release.set()  # let the worker thread finish


async def test_tool_exceptions_propagate() -> None:
    @tool
    def boom() -> None:
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError, match="disk on fire"):
        await boom.invoke({})


def test_calling_the_tool_calls_the_function() -> None:
    @tool
    def mul(a: int, b: int) -> int:
        """Multiply."""
        return a * b

    assert mul(3, b=4) == 12
    assert mul.__doc__ == "Multiply."
    assert mul.__wrapped__ is mul.fn
    assert repr(mul) == "Tool('mul')"


def test_tool_class_can_be_used_directly() -> None:
    def echo(text: str) -> str:
        return text

    t = Tool(echo, read_only=True)
    assert t.name == "echo"
    assert t.read_only is True
    assert t.prepare({"text": 5}) == {"text": "5"}


def test_check_edit_refuses_what_prepare_would_coerce() -> None:
    from datetime import datetime

    from tether.errors import ToolArgumentError

    @tool
    def plan(path: str, count: int, when: datetime, tags: list[str], ratio: float = 1.0) -> str:
        return path

    real = {"path": 7, "count": "2", "when": "2025-01-01T00:00:00", "tags": '["a"]'}
    assert plan.prepare(real)["path"] == "7"  # a model's 7 for a string: coerced, as before
    ok = plan.check_edit(real, {"count": 3, "ratio": 2})  # untouched model values stay lax
    assert (ok["path"], ok["count"], ok["ratio"], ok["tags"]) == ("7", 3, 2.0, ["a"])
    assert plan.check_edit(real, {"when": "2025-02-01T10:00:00"})["when"].month == 2
    for edit, why in (
        ({"path": 42}, "argument 'path': expected a string, got 42"),
        ({"count": "3"}, "argument 'count': expected an integer, got '3'"),
        ({"count": 3.0}, "argument 'count'"),
        ({"tags": '["b"]'}, "argument 'tags'"),
        ({"ratio": True}, "argument 'ratio'"),
    ):
        with pytest.raises(ToolArgumentError, match=f"tool 'plan': .*{why}"):
            plan.check_edit(real, edit)
