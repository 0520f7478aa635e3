"""A run's Result as the plain data a workflow returns and its Update answers with."""

from __future__ import annotations

from typing import Any

from tether.result import Result


def outcome(result: Result, agent: Any) -> dict[str, Any]:
    """``stop_reason``, ``text``, ``reason``, ``session_id``, ``usage`` and the pending
    ``interrupts`` (their arguments and reasons through the one redaction path)."""
    from tether.governance.approvals import shown_interrupt
    from tether.governance.redaction import interrupt_redactor

    pending = []
    for interrupt in result.interrupts:
        shown, reason = shown_interrupt(interrupt, interrupt_redactor(agent, interrupt))
        call = interrupt.tool_call
        pending.append(
            {
                "id": interrupt.id,
                "name": interrupt.name,
                "reason": reason,
                "source": interrupt.source,
                "tool": call.name if call is not None else None,
                "arguments": shown if call is not None else None,
            }
        )
    return {
        "stop_reason": result.stop_reason,
        "text": result.text,
        "reason": result.reason,
        "session_id": result.session_id,
        "usage": result.usage.to_dict(),
        "interrupts": pending,
    }
