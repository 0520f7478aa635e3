"""Suspension: where a suspended run stopped (kept on the conversation, folded from the journal)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from tether.control.interrupts import Interrupt
from tether.messages import ToolCall, ToolResult
from tether.result import StopReason


@dataclass(slots=True)
class Suspension:
    """Where a suspended run stopped: its unfinished tool batch and pending interrupts."""

    interrupts: list[Interrupt]
    pending: tuple[Sequence[ToolCall], list[ToolResult | None]] | None
    batch_position: int
    stop_reason: StopReason
    in_doubt: list[str] = field(default_factory=list)
    """Ids of calls a crash left in doubt (started, no saved result)."""
