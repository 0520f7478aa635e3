"""Strands runner of the context benchmark (run with bench/.venvs/strands/bin/python).

The same workload as bench/context.py's tether rows, played by a
``strands.models.Model`` subclass (Strands only calls ``Model.stream``):

1. Tokens: one invocation of N tool turns. The fake model calls ``lookup(n)``
   until the latest tool result it sees says n = N-1, then answers; each result
   is ``record n: `` + 400 x (about 100 tokens). A call without tool specs is a
   summarising call and gets a one-line summary. A request's size is counted as
   tether's ScriptedModel counts it (system prompt and text characters, a tool
   result's text, 24 characters per tool call, four characters a token) and
   reported as the call's input tokens (a ``metadata`` usage event, which
   Strands' own estimate reads). A request over the window (8,000 tokens) is
   refused with ``ContextWindowOverflowException``, as a provider would refuse
   it; a refused request is not counted as sent (providers do not bill it), the
   refusals are counted apart. ``context_window_limit`` is declared in the
   model's config (what Strands' proactive compression reads).
   Compressions: the manager's ``reduce_context`` calls that shortened the
   history (a sliding window's trims, a summary).
2. Overhead: one invocation (a prompt, one model call, a text reply) on an
   agent whose history already holds H messages, median of R invocations
   continuing the same conversation, ``perf_counter_ns`` around
   ``await agent.invoke_async(...)``; NullConversationManager is the baseline.

Prints one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import AsyncIterable
from importlib.metadata import version
from typing import Any

import _strands_fake
from _strands_fake import text_events, tool_use_events
from strands import Agent, tool
from strands.agent.conversation_manager import (
    ConversationManager,
    NullConversationManager,
    SlidingWindowConversationManager,
    SummarizingConversationManager,
)
from strands.types.content import Messages
from strands.types.exceptions import ContextWindowOverflowException
from strands.types.streaming import StreamEvent

RESULT = "x" * 400
PROMPT = "look the records up"


def chars_of(messages: Messages, system_prompt: str | None) -> int:
    """Characters of a request, as tether's ScriptedModel counts them."""
    chars = len(system_prompt or "")
    for message in messages:
        for block in message["content"]:
            if "text" in block:
                chars += len(block["text"])
            elif "toolResult" in block:
                chars += sum(len(c.get("text", "")) for c in block["toolResult"]["content"])
            elif "toolUse" in block:
                chars += 24
            elif "reasoningContent" in block:
                chars += len(block["reasoningContent"].get("reasoningText", {}).get("text", ""))
    return chars


def done(messages: Messages) -> int:
    """Lookups made so far, read from the latest tool result the model sees."""
    for message in reversed(messages):
        for block in message["content"]:
            if "toolResult" in block:
                text = block["toolResult"]["content"][0]["text"]
                return int(text.split(":", 1)[0].split()[-1]) + 1
    return 0


class FakeModel(_strands_fake.FakeModel):
    """Instant scripted model with a window; counts what it was sent."""

    def __init__(self, turns: int, window: int) -> None:
        self.turns = turns
        self.window = window
        self.input_tokens = 0
        self.calls = 0
        self.summaries = 0
        self.refused = 0
        self.largest = 0

    def get_config(self) -> dict[str, Any]:
        return {"context_window_limit": self.window}

    async def stream(
        self,
        messages: Messages,
        tool_specs: Any = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncIterable[StreamEvent]:
        size = max(1, chars_of(messages, system_prompt) // 4)
        if size > self.window:
            self.refused += 1
            raise ContextWindowOverflowException(
                f"maximum context length is {self.window} tokens; the request has {size}"
            )
        self.calls += 1
        self.input_tokens += size
        self.largest = max(self.largest, size)
        if not tool_specs:  # a summarising call
            self.summaries += 1
            reply = f"summary: {chars_of(messages, None) // 100} hundred chars condensed"
            events = text_events(reply, _usage(size, reply))
        elif self.turns < 0:  # the overhead workload: always a text reply
            events = text_events("ok", _usage(size, "ok"))
        else:
            n = done(messages)
            if n >= self.turns:
                events = text_events(f"done after {n}", _usage(size, "done"))
            else:
                events = tool_use_events(
                    "lookup", json.dumps({"n": n}), f"c{n}", _usage(size, "x" * 24)
                )
        for event in events:
            yield event


def _usage(size: int, reply: str) -> dict[str, int]:
    out = max(1, len(reply) // 4)
    return {"inputTokens": size, "outputTokens": out, "totalTokens": size + out}


@tool
def lookup(n: int) -> str:
    """Look a record up."""
    return f"record {n}: {RESULT}"


def counting(manager: ConversationManager) -> ConversationManager:
    """Count the manager's reductions that shortened the history."""
    reduce = manager.reduce_context
    manager.reductions = 0  # type: ignore[attr-defined]

    def reduce_context(agent: Any, e: Exception | None = None, **kwargs: Any) -> None:
        before = len(agent.messages)
        reduce(agent, e=e, **kwargs)
        if len(agent.messages) < before:
            manager.reductions += 1  # type: ignore[attr-defined]

    manager.reduce_context = reduce_context  # type: ignore[method-assign]
    return manager


NO_WINDOW = 10**9
MANAGERS: dict[str, Any] = {
    "Strands NullConversationManager (no window: the naive history)": (
        NullConversationManager,
        NO_WINDOW,
    ),
    "Strands SlidingWindow() (40 messages, trims at the end or on overflow)": (
        SlidingWindowConversationManager,
        None,
    ),
    "Strands SlidingWindow(72, per_turn=True) (~4,000 tokens)": (
        lambda: SlidingWindowConversationManager(window_size=72, per_turn=True),
        None,
    ),
    "Strands Summarizing() (on overflow only)": (SummarizingConversationManager, None),
    "Strands Summarizing(proactive at 0.8)": (
        lambda: SummarizingConversationManager(
            proactive_compression={"compression_threshold": 0.8}
        ),
        None,
    ),
}
"""Row name: (manager factory, the model's window; None: --window)."""


def tokens_row(turns: int, window: int, make: Any) -> dict[str, Any]:
    model = FakeModel(turns, window)
    manager = counting(make())
    agent = Agent(model=model, tools=[lookup], callback_handler=None, conversation_manager=manager)
    started = time.perf_counter()
    error = None
    try:
        result = agent(PROMPT)
        text = str(result).strip()
        if text != f"done after {turns}":
            error = f"ended with {text!r}"
    except Exception as exc:  # reported in the row: the manager could not keep up
        error = f"{type(exc).__name__}: {exc}"[:300]
    elapsed = time.perf_counter() - started
    return {
        "input_tokens": model.input_tokens,
        "model_calls": model.calls,
        "compressions": manager.reductions,  # type: ignore[attr-defined]
        "summarising_calls": model.summaries,
        "refused_requests": model.refused,
        "largest_request": model.largest,
        "seconds": round(elapsed, 3),
        "error": error,
    }


def _history(size: int) -> Messages:
    messages: Messages = [{"role": "user", "content": [{"text": "start"}]}]
    n = 0
    while len(messages) < size:
        use = {"toolUseId": f"c{n}", "name": "lookup", "input": {"n": n}}
        messages.append({"role": "assistant", "content": [{"toolUse": use}]})  # type: ignore[typeddict-item]
        content = [{"text": f"record {n}: {RESULT}"}]
        result = {"toolUseId": f"c{n}", "status": "success", "content": content}
        messages.append({"role": "user", "content": [{"toolResult": result}]})  # type: ignore[typeddict-item]
        n += 1
    return messages[:size] if "toolResult" in messages[-1]["content"][0] else messages[: size - 1]


OVERHEAD: dict[str, Any] = {
    "null": NullConversationManager,
    "sliding": lambda: SlidingWindowConversationManager(window_size=10**7, per_turn=True),
    "summarizing": lambda: SummarizingConversationManager(
        proactive_compression={"compression_threshold": 0.8}
    ),
}


def overhead(size: int, make: Any, repeats: int) -> float:
    """Median microseconds of one invocation continuing a history of ``size`` messages."""
    model = FakeModel(-1, 10_000_000)
    agent = Agent(model=model, tools=[lookup], callback_handler=None, conversation_manager=make())
    agent.messages = _history(size)

    async def once() -> float:
        started = time.perf_counter_ns()
        await agent.invoke_async("next")
        return (time.perf_counter_ns() - started) / 1000

    async def run() -> float:
        for _ in range(3):
            await once()
        return statistics.median([await once() for _ in range(repeats)])

    return asyncio.run(run())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--window", type=int, default=8_000)
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--sizes", default="10,1000,5000")
    args = parser.parse_args()
    tokens = {
        name: tokens_row(args.turns, window or args.window, make)
        for name, (make, window) in MANAGERS.items()
    }
    curve = []
    for size in [int(s) for s in args.sizes.split(",")]:
        row: dict[str, Any] = {"messages": size}
        for name, make in OVERHEAD.items():
            row[f"{name}_us"] = round(overhead(size, make, args.repeats), 1)
        curve.append(row)
    print(
        json.dumps(
            {
                "version": f"strands-agents {version('strands-agents')}",
                "tokens": tokens,
                "overhead": curve,
            }
        )
    )


if __name__ == "__main__":
    main()
