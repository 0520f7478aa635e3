"""Every manager obeys the loop's rules on random histories (hypothesis)."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tether import Agent, Execution
from tether.context import ContextManager, SlidingWindow, Summarizing
from tether.context.compaction import OMITTED_MARK, SUMMARY_MARK
from tether.context.estimate import Estimator
from tether.context.step import _compress, _Pass
from tether.messages import Message, TextBlock, ToolCall, ToolResult
from tether.models import ScriptedModel
from tether.run_state import RunState
from tether.tools.context import CancelSignal

TURN = st.one_of(
    st.tuples(st.just("user"), st.integers(1, 600)),
    st.tuples(st.just("text"), st.integers(1, 600)),
    st.tuples(st.just("batch"), st.integers(1, 3), st.integers(1, 900)),
)


def _history(turns: list[tuple[Any, ...]], pending: int) -> list[Message]:
    messages = [Message.user("first " + "u" * 50)]
    for number, turn in enumerate(turns):
        if turn[0] == "user":
            messages.append(Message.user("u" * turn[1]))
        elif turn[0] == "text":
            messages.append(Message.assistant("a" * turn[1]))
        else:
            calls = [ToolCall(f"c{number}_{i}", "t", {"i": i}) for i in range(turn[1])]
            messages.append(Message("assistant", [TextBlock("calling"), *calls]))
            messages.append(Message("tool", [ToolResult(c.id, "t", "r" * turn[2]) for c in calls]))
    if pending:
        calls = [ToolCall(f"pending_{i}", "t", {}) for i in range(pending)]
        messages.append(Message("assistant", calls))
    return messages


def _managers() -> list[ContextManager]:
    summariser = ScriptedModel(lambda m, s: "the summary", name="prop-sum")
    return [
        SlidingWindow(6),
        SlidingWindow(max_tokens=400),
        Summarizing(summariser, keep_recent=2),
        Summarizing(ScriptedModel([], name="prop-broken")),  # failing summariser
    ]


def _check_view(view: list[Message], messages: list[Message], pending: int) -> None:
    assert view[0] is messages[0]  # the first user message, verbatim
    open_calls: set[str] = set()
    for message in view:
        if message.role == "tool":
            assert {r.tool_call_id for r in message.tool_results} == open_calls
            open_calls = set()
        else:
            assert not open_calls, "a tool call lost its result"
            open_calls = {c.id for c in message.tool_calls}
    if pending:
        assert view[-1] is messages[-1]  # the pending batch (its interrupts refer to it)
        assert open_calls == {c.id for c in messages[-1].tool_calls}
    else:
        assert not open_calls
    marked = [m for m in view if m.text.startswith((SUMMARY_MARK, OMITTED_MARK))]
    assert len(marked) <= 1


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    turns=st.lists(TURN, min_size=1, max_size=40),
    pending=st.integers(0, 2),
    passes=st.integers(1, 3),
)
def test_managers_never_orphan_calls_and_keep_pending_batches(
    turns: list[tuple[Any, ...]], pending: int, passes: int
) -> None:
    messages = _history(turns, pending)
    for manager in _managers():
        agent = Agent(
            ScriptedModel(["x"], name="prop", context_window=2_000),
            store=None,
            execution=Execution(context=manager),
        )
        agent.messages = list(messages)

        async def run_passes(agent: Agent = agent, manager: ContextManager = manager) -> None:
            run = RunState(agent, CancelSignal())
            if pending:
                calls = messages[-1].tool_calls
                run.pending = (calls, [None] * len(calls))
                run.batch_position = len(messages) - 1
            estimator = run.context = Estimator()
            for _ in range(passes):
                estimator.full(
                    agent.conversation.compaction.view(agent.messages)
                    if agent.conversation.compaction
                    else agent.messages,
                    0,
                    len(agent.messages),
                )
                async for _event in _compress(run, manager, estimator, 1_000, "threshold", _Pass()):
                    pass

        asyncio.run(run_passes())
        compaction = agent.conversation.compaction
        if compaction is None:
            continue
        assert compaction.end > compaction.start
        view = compaction.view(agent.messages)
        assert agent.messages == messages  # the transcript is never changed
        _check_view(view, messages, pending)
