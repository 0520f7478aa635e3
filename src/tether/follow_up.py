"""Strands' ``AfterInvocation.resume``: a hook starts another invocation at once (bounded)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from tether.errors import RetryLimitError
from tether.events import StreamEvent
from tether.loop import run_invocation
from tether.messages import Message

if TYPE_CHECKING:
    from tether.running import Running
    from tether.session import SessionJournal
    from tether.tools.context import CancelSignal

MAX_FOLLOW_UPS = 5
"""Invocations AfterInvocation hooks may start in a row with ``resume``."""


async def follow_ups(
    agent: Running,
    events: AsyncGenerator[StreamEvent, None],
    cancel: CancelSignal,
    journal: SessionJournal | None,
    to_messages: Callable[[Any], list[Message]],
) -> AsyncGenerator[StreamEvent, None]:
    """``events``, then one invocation per ``resume`` prompt the hooks set, under the same
    lease and journal, while the last one neither suspended nor failed."""
    for rounds in range(MAX_FOLLOW_UPS + 1):
        async with aclosing(events) as stream:
            async for event in stream:
                yield event
        prompt = next_prompt(agent, rounds, to_messages)
        if prompt is None:
            return
        events = run_invocation(agent, prompt, cancel, journal=journal)


def next_prompt(
    agent: Running, rounds: int, to_messages: Callable[[Any], list[Message]]
) -> list[Message] | None:
    """The next follow-up invocation's messages after ``rounds`` of them, or None (no
    ``resume`` was set, or the session is suspended); consumes the request. Raises
    RetryLimitError past :data:`MAX_FOLLOW_UPS`."""
    conversation = agent.conversation
    prompt = conversation.follow_up
    conversation.follow_up = None
    if prompt is None or conversation.suspension is not None:
        return None
    if rounds >= MAX_FOLLOW_UPS:
        raise RetryLimitError(
            f"AfterInvocation hooks asked to resume session {agent.session_id} "
            f"{MAX_FOLLOW_UPS + 1} times in a row; the limit is {MAX_FOLLOW_UPS}"
        )
    return to_messages(prompt)
