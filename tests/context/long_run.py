"""A long tool-calling conversation played by ScriptedModels (shared by tests and bench)."""

from __future__ import annotations

from typing import Any

from tether import Agent, Execution, tool
from tether.context import ContextManager, Summarizing
from tether.messages import Message
from tether.models import ScriptedModel

RESULT = "x" * 400  # about 100 tokens per tool result


@tool
def lookup(n: int) -> str:
    """Look a record up."""
    return f"record {n}: {RESULT}"


def lookups_done(messages: list[Message]) -> int:
    """Lookups made so far, read from the latest tool result the model sees."""
    for message in reversed(messages):
        for result in message.tool_results:
            return int(result.content.split(":", 1)[0].split()[-1]) + 1
    return 0


def long_script(turns: int) -> Any:
    """A callable script: ``turns`` tool calls, then a final answer."""

    def play(messages: list[Message], specs: list[dict[str, Any]]) -> dict[str, Any]:
        done = lookups_done(messages)
        if done >= turns:
            return {"text": f"done after {done} lookups"}
        return {"text": f"step {done}", "tool_calls": [{"name": "lookup", "args": {"n": done}}]}

    return play


def summariser() -> ScriptedModel:
    """A summarising model: says how much it was asked to summarise."""

    def play(messages: list[Message], specs: list[dict[str, Any]]) -> str:
        text = messages[-1].text
        return f"summary of {text.count('called lookup')} lookups"

    return ScriptedModel(play, name="summariser")


def long_agent(
    turns: int,
    *,
    window: int | None = 4_000,
    overflow_at: int | None = 4_000,
    context: ContextManager | None = None,
    **options: Any,
) -> Agent:
    model = ScriptedModel(
        long_script(turns),
        name="long",
        context_window=window,
        overflow_at=overflow_at,
        record_requests=True,
    )
    if context is None:
        context = Summarizing(summariser())
    options.setdefault("store", None)
    options.setdefault("limits", None)  # a long run on purpose: no default cap of 90 model calls
    return Agent(model, tools=[lookup], execution=Execution(context=context), **options)
