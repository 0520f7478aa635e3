"""Suspension: where a suspended run stopped (kept on the conversation, folded from the journal)."""

from __future__ import annotations

from collections.abc import Container, Sequence
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
    held: dict[str, list[Interrupt]] = field(default_factory=dict)
    """Set by a targeted resume: the batch's calls whose interrupts are all unanswered
    (call id -> those interrupts). They stay pending and do not run."""
    recovered: bool = False
    """The last run's process died: the resume runs (to write the suspension again) even
    when every call left waits for an answer."""

    def target(self, answered: Container[str]) -> bool:
        """Targeted resume: hold back the calls none of whose interrupts is ``answered``,
        and say whether anything else of the batch can run now.

        False (nothing to run, or an interrupt not owned by a call of the batch, e.g. one
        raised before a model call) leaves ``held`` empty: the run waits, as before.
        """
        self.held = {}
        if self.pending is None:
            return False
        calls, results = self.pending
        owned: dict[str, list[Interrupt]] = {}
        for interrupt in self.interrupts:
            owner = owning_call(interrupt, calls)
            if owner is None:
                return False
            owned.setdefault(owner, []).append(interrupt)
        held = {
            call_id: interrupts
            for call_id, interrupts in owned.items()
            if not any(i.id in answered for i in interrupts)
        }
        runnable = self.recovered or any(
            r is None and c.id not in held for c, r in zip(calls, results, strict=True)
        )
        if runnable:
            self.held = held
        return runnable


def owning_call(interrupt: Interrupt, calls: Sequence[ToolCall]) -> str | None:
    """The id of the call of ``calls`` whose run raised ``interrupt``.

    An interrupt lifted from a sub-agent names its path: it starts with the step of the
    call that ran the child (``"<tool>#<call id>/"``, tether.agents.addresses.step); its
    ``tool_call`` is the child's. Any other interrupt of a call carries that call.
    """
    for call in calls:
        if interrupt.point.startswith(f"{call.name}#{call.id}/"):
            return call.id
    if "/" in interrupt.point or interrupt.tool_call is None:
        return None
    ids = {call.id for call in calls}
    return interrupt.tool_call.id if interrupt.tool_call.id in ids else None
