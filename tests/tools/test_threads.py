"""ToolThreads: the reusable worker pool behind sync tools (issue 11, goal 6)."""

import asyncio
import contextvars
import threading
from typing import Any

import pytest

from tether import Agent, tool
from tether.errors import ConfigurationError
from tether.models import ScriptedModel
from tether.tools.threads import ToolThreads

request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="unset")


async def test_a_call_runs_on_a_worker_and_settles_the_callers_future() -> None:
    pool = ToolThreads(2)
    loop = asyncio.get_running_loop()
    assert await pool.start(loop, threading.get_ident) != threading.get_ident()
    pool.shutdown()


async def test_an_exception_reaches_the_caller() -> None:
    pool = ToolThreads(1)

    def boom() -> None:
        raise KeyError("missing")

    with pytest.raises(KeyError, match="missing"):
        await pool.start(asyncio.get_running_loop(), boom)
    pool.shutdown()


async def test_sequential_calls_reuse_one_thread() -> None:
    pool = ToolThreads(8)
    loop = asyncio.get_running_loop()
    idents = {await pool.start(loop, threading.get_ident) for _ in range(50)}
    assert len(idents) == 1
    pool.shutdown()


async def test_concurrency_is_bounded_by_max_workers() -> None:
    pool = ToolThreads(3)
    loop = asyncio.get_running_loop()
    running = 0
    peak = 0
    lock = threading.Lock()
    gate = threading.Event()

    def busy() -> int:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        gate.wait(5)
        with lock:
            running -= 1
        return threading.get_ident()

    futures = [pool.start(loop, busy) for _ in range(10)]
    await asyncio.sleep(0.05)
    gate.set()
    idents = set(await asyncio.gather(*futures))
    assert peak == 3
    assert len(idents) == 3
    pool.shutdown()


async def test_a_call_cancelled_before_a_worker_takes_it_does_not_run() -> None:
    pool = ToolThreads(1)
    loop = asyncio.get_running_loop()
    gate = threading.Event()
    ran: list[str] = []
    first = pool.start(loop, lambda: gate.wait(5))
    second = pool.start(loop, lambda: ran.append("second"))
    second.cancel()
    gate.set()
    await first
    await pool.start(loop, lambda: None)  # the worker has passed the cancelled job
    assert ran == []
    pool.shutdown()


async def test_the_loop_keeps_running_while_a_sync_tool_blocks() -> None:
    gate = threading.Event()

    @tool
    def wait_for_gate() -> str:
        """Block until the loop opens the gate."""
        return "opened" if gate.wait(5) else "timed out"

    async def open_gate() -> None:
        await asyncio.sleep(0.01)  # runs only if the loop is free while the tool blocks
        gate.set()

    agent = Agent(
        model=ScriptedModel([{"tool_calls": [{"name": "wait_for_gate", "args": {}}]}, "done"]),
        tools=[wait_for_gate],
    )
    opener = asyncio.create_task(open_gate())
    result = await agent.invoke_async("go")
    await opener
    assert result.text == "done"
    assert "opened" in str(agent.messages[-2].content)
    agent.close()


async def test_an_agents_sync_tools_use_its_tool_threads_with_the_callers_contextvars() -> None:
    @tool
    def where() -> str:
        """Report the thread and the request id."""
        return f"{threading.current_thread().name}|{request_id.get()}"

    agent = Agent(
        model=ScriptedModel([{"tool_calls": [{"name": "where", "args": {}}]}, "done"]),
        tools=[where],
    )
    request_id.set("r-9")
    await agent.invoke_async("go")
    assert isinstance(agent.executor, ToolThreads)
    assert "tether-tool_0|r-9" in str(agent.messages[-2].content)
    agent.close()


def test_submit_is_a_plain_executor_too() -> None:
    pool = ToolThreads(1)
    assert pool.submit(lambda x: x * 2, 21).result(5) == 42
    pool.shutdown()


def test_shutdown_cancels_queued_calls_and_refuses_new_ones() -> None:
    pool = ToolThreads(1)
    gate, started = threading.Event(), threading.Event()
    running = pool.submit(lambda: started.set() or gate.wait(5))
    assert started.wait(5)
    queued = pool.submit(lambda: "never")
    pool.shutdown(wait=False, cancel_futures=True)
    gate.set()
    assert running.result(5) is True
    assert queued.cancelled()
    with pytest.raises(ConfigurationError, match=r"shut down.*agent\.executor"):
        pool.submit(lambda: None)


def test_max_workers_below_one_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="max_workers must be at least 1, got 0"):
        ToolThreads(0)


def test_closing_an_agent_gives_it_a_fresh_pool_on_next_use() -> None:
    agent = Agent(model=ScriptedModel(["hi"]))
    first: Any = agent.executor
    agent.close()
    assert agent.executor is not first
    agent.close()
