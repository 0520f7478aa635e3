"""MAF + AGENT-HOOKS as the conversation grows (bench/.venvs/maf/bin/python).

Usage: `python bench/peers/maf_hooks_scaling.py --n 1000 [--invocations 20]`;
prints one JSON line `{"row": "maf-hooks", "n": ..., "median_ms": ...}`.
bench/scaling.py runs it as its `maf-hooks` row.

The peer of bench/scaling.py's `hooks` row: the MAF + AGENT-HOOKS agent of
bench/peers/maf_hooks_overhead.py (`create_agent_hooks_middleware([allow-all])`,
the O(1) `FakeChatClient`, `async def add`) run with a session
(`agent.create_session()`, MAF's in-memory history provider) that already holds
n messages of history, the same turns as bench/scaling.py's `history(n)`
(user / assistant tool call / tool result / assistant answer, ~60 characters
each) built from MAF's own content types. One warm-up run, then `--invocations`
timed runs (`perf_counter_ns` around `await agent.run(PROMPT, session=session)`)
on the same agent and session: the history grows by 4 messages per run, as in
bench/scaling.py. Reported: the median, in ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from typing import Any

from _harness import ANSWER, PROMPT
from _hooks_interceptor import CountingAllowAll
from agent_framework import Agent, AgentSession, Content, Message, create_agent_hooks_middleware
from maf_overhead import FakeChatClient, add

FILLER = "Some earlier turn of the conversation, about sixty characters."


def history_messages(n: int) -> list[Message]:
    """bench/scaling.py's `history(n)` in MAF's types."""
    out: list[Message] = []
    turn = 0
    while len(out) < n:
        cid = f"h{turn}"
        call = Content.from_function_call(call_id=cid, name="add", arguments={"a": turn, "b": 1})
        result = Content.from_function_result(call_id=cid, result=str(turn + 1))
        out.append(Message(role="user", contents=[Content.from_text(f"{FILLER} {turn}")]))
        out.append(Message(role="assistant", contents=[call]))
        out.append(Message(role="tool", contents=[result]))
        out.append(
            Message(role="assistant", contents=[Content.from_text(f"{FILLER} answer {turn}")])
        )
        turn += 1
    return out[: n - n % 4] if n % 4 else out


def seeded_session(agent: Agent, messages: list[Message]) -> AgentSession:
    """A session whose in-memory history already holds ``messages``."""
    session = agent.create_session()
    session.state["in_memory"] = {"messages": list(messages)}
    return session


def make_agent() -> Agent:
    bundle = create_agent_hooks_middleware([CountingAllowAll()])
    return Agent(client=FakeChatClient(), tools=[add], middleware=[bundle])


def seeded(n: int) -> tuple[Any, Any]:
    """(invoke, reset) at a fixed history of ``n`` messages (for bench/peers/_hooks_profile.py):
    each reset gives a new session holding the same ``n`` message objects."""
    agent = make_agent()
    history = history_messages(n)
    box = [seeded_session(agent, history)]

    def reset() -> None:
        box[0] = seeded_session(agent, history)

    return (lambda: agent.run(PROMPT, session=box[0])), reset


async def measure(n: int, invocations: int) -> dict[str, Any]:
    agent = make_agent()
    session = seeded_session(agent, history_messages(n))
    response = await agent.run(PROMPT, session=session)  # warm-up
    assert response.text == ANSWER, response.text
    times: list[float] = []
    for _ in range(invocations):
        began = time.perf_counter_ns()
        response = await agent.run(PROMPT, session=session)
        times.append((time.perf_counter_ns() - began) / 1e6)
        assert response.text == ANSWER, response.text
    return {"row": "maf-hooks", "n": n, "median_ms": statistics.median(times)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--n", type=int, required=True)
    p.add_argument("--invocations", type=int, default=20)
    args = p.parse_args()
    print(json.dumps(asyncio.run(measure(args.n, args.invocations))))


if __name__ == "__main__":
    main()
