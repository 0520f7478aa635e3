"""What an evaluator is given: one finished run of one case."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from tether.messages import Message, ToolCall, ToolResult

if TYPE_CHECKING:
    from tether.control.interrupts import Interrupt
    from tether.evals.case import Case
    from tether.result import Result

RunStatus: TypeAlias = Literal["ok", "interrupted", "error"]


@dataclass
class CaseRun:
    """One run of a case: its final ``result`` (after any answered interrupts), the
    conversation's ``messages``, every interrupt raised on the way, the summed usage,
    the wall-clock ``latency`` in seconds, and ``error`` when the factory or the run
    raised (then ``status`` is ``error`` and evaluators do not score it)."""

    case: Case
    repeat: int = 0
    session_id: str | None = None
    result: Result | None = None
    messages: list[Message] = field(default_factory=list)
    interrupts: list[Interrupt] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    cost: Decimal | None = None
    latency: float = 0.0
    output_type: Any = None
    error: str | None = None
    status: RunStatus = "ok"

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def stop_reason(self) -> str | None:
        return None if self.result is None else self.result.stop_reason

    @property
    def text(self) -> str:
        """The final answer's text ("" without one)."""
        return "" if self.result is None else self.result.text

    @property
    def output(self) -> Any:
        """The structured output when the run had an output type, else the text."""
        if self.result is not None and self.result.output is not None:
            return self.result.output
        return self.text

    @property
    def tool_calls(self) -> list[ToolCall]:
        """Every tool call the model made, in order (denied ones included)."""
        return [c for m in self.messages if m.role == "assistant" for c in m.tool_calls]

    @property
    def tool_results(self) -> list[ToolResult]:
        """Every tool result of the run, in order (``status`` says denied, error...)."""
        return [r for m in self.messages if m.role == "tool" for r in m.tool_results]
