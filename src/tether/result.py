"""The outcome of one invocation."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal, TypeAlias

from tether.messages import Message, Usage, add_cost

StopReason: TypeAlias = Literal[
    "end_turn",
    "interrupt",
    "cancelled",
    "paused",
    "blocked",
    "limit_turns",
    "limit_total_tokens",
    "limit_output_tokens",
    "limit_wall_time",
    "limit_tool_calls",
    "cost_limit",
    "budget_exhausted",
    "max_tokens",
    "error",
]


@dataclass(slots=True)
class RunUsage:
    """Tokens and call counts of one invocation."""

    input_tokens: int = 0
    output_tokens: int = 0
    model_calls: int = 0
    tool_calls: int = 0
    model_retries: int = 0
    model_fallbacks: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    """Of the output tokens, those the model spent reasoning (where the provider says)."""
    compressions: int = 0
    """Times the model's view of the conversation was compressed."""
    context_tokens_before: int = 0
    context_tokens_after: int = 0
    """Estimated request tokens before and after the compressions (summed over them)."""
    continuations: int = 0
    """Times a reply cut off at the output token limit was continued or retried."""
    cost: Decimal | None = None
    """USD of the priced model calls (``Usage.cost``), sub-agents included; None when no
    call had a known price."""
    by_agent: dict[str, RunUsage] = field(default_factory=dict)
    """Usage of the sub-agents this invocation ran, by agent path (``researcher#c1``,
    ``researcher#c1/coder#c4``): each entry is that agent's totals, its own sub-agents
    included. The totals above include every sub-agent."""

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def add_model_call(self, usage: Usage) -> None:
        self.model_calls += 1
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.cache_read_tokens += usage.cache_read_tokens
        self.cache_write_tokens += usage.cache_write_tokens
        self.reasoning_tokens += usage.reasoning_tokens
        if usage.cost is not None:
            self.cost = add_cost(self.cost, usage.cost)

    def add_child(self, path: str, usage: RunUsage) -> None:
        """Roll a sub-agent's usage (its own sub-agents included) into these totals."""
        _add(self, usage)
        _add(self.by_agent.setdefault(path, RunUsage()), usage)
        for sub, nested in usage.by_agent.items():
            _add(self.by_agent.setdefault(f"{path}/{sub}", RunUsage()), nested)

    def to_dict(self) -> dict[str, Any]:
        """The counters (``reasoning_tokens`` when not 0, ``cost`` as a decimal string when
        known)."""
        out: dict[str, Any] = {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.total_tokens,
            "model_calls": self.model_calls,
            "tool_calls": self.tool_calls,
            "model_retries": self.model_retries,
            "model_fallbacks": self.model_fallbacks,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "compressions": self.compressions,
            "context_tokens_before": self.context_tokens_before,
            "context_tokens_after": self.context_tokens_after,
            "continuations": self.continuations,
        }
        if self.reasoning_tokens:  # only when a provider said (journals stay as they were)
            out["reasoning_tokens"] = self.reasoning_tokens
        if self.cost is not None:
            out["cost"] = str(self.cost)
        return out


@dataclass(slots=True)
class Result:
    """What an invocation produced.

    ``message`` is the last assistant message (None if the model never answered);
    ``reason`` explains any stop other than ``end_turn`` (the limit that was hit,
    the policy that blocked, the error); ``interrupts`` lists pending interrupts
    when ``stop_reason == "interrupt"``.
    """

    stop_reason: StopReason
    message: Message | None
    usage: RunUsage
    session_id: str
    reason: str | None = None
    interrupts: list[Any] = field(default_factory=list)
    output: Any = None
    """The validated structured output (``run(..., output_type=T)``), else None."""

    @property
    def text(self) -> str:
        """The visible text of the final assistant message ("" if none)."""
        return self.message.text if self.message is not None else ""

    def __str__(self) -> str:
        return self.text


def _add(target: RunUsage, usage: RunUsage) -> None:
    target.input_tokens += usage.input_tokens
    target.output_tokens += usage.output_tokens
    target.model_calls += usage.model_calls
    target.tool_calls += usage.tool_calls
    target.model_retries += usage.model_retries
    target.model_fallbacks += usage.model_fallbacks
    target.cache_read_tokens += usage.cache_read_tokens
    target.cache_write_tokens += usage.cache_write_tokens
    target.reasoning_tokens += usage.reasoning_tokens
    target.compressions += usage.compressions
    target.context_tokens_before += usage.context_tokens_before
    target.context_tokens_after += usage.context_tokens_after
    target.continuations += usage.continuations
    target.cost = add_cost(target.cost, usage.cost)
