"""Addresses in an agent tree: child session ids and interrupts lifted into a parent.

A sub-agent call is one step of a path, ``"<tool name>#<call id>"``; a grandchild's
interrupt reaches the top as ``researcher#c1/coder#c7/<its name>``. Everything here
is deterministic, so a resumed (or recovered) parent re-derives the same child
session and the same interrupt ids.
"""

from __future__ import annotations

import hashlib

from tether.control.interrupts import Interrupt, interrupt_id
from tether.errors import ConfigurationError
from tether.session_ids import MAX_SESSION_ID, validate_session_id

SEPARATOR = "/"


def step(tool_name: str, call_id: str) -> str:
    """One step of an agent path: the sub-agent tool and the call that ran it."""
    return f"{tool_name}#{call_id}"


def child_session_id(parent_session: str, tool_name: str, position: int, call_id: str) -> str:
    """The session id of the child run by call ``call_id`` (at message ``position``) of the
    parent's tool ``tool_name``: ``<parent>/<tool>#<position>.<call id>`` when that is a
    valid session id, else ``sub_<hash>`` of the same parts (long or odd model call ids)."""
    readable = f"{parent_session}{SEPARATOR}{tool_name}#{position}.{call_id}"
    try:
        if len(readable) <= MAX_SESSION_ID:
            return validate_session_id(readable)
    except ConfigurationError:
        pass
    key = "\x00".join((parent_session, tool_name, str(position), call_id)).encode()
    return "sub_" + hashlib.sha256(key).hexdigest()[:40]


def lift(interrupt: Interrupt, tool_name: str, call_id: str, position: int) -> Interrupt:
    """``interrupt`` of a child as an interrupt of its parent.

    The id is derived from the child's id and the call (answers find their way back);
    ``name`` and ``point`` gain the step, so every view (Result, inbox, CLI) shows the
    path; ``reason``, ``source`` and ``tool_call`` stay the child's, so the approver sees
    the child's question and the answer is checked as the child's kind of interrupt.
    """
    where = step(tool_name, call_id)
    return Interrupt(
        id=lifted_id(interrupt.id, tool_name, call_id, position),
        name=f"{where}{SEPARATOR}{interrupt.name}",
        reason=interrupt.reason,
        source=interrupt.source,
        point=f"{where}{SEPARATOR}{interrupt.point}",
        tool_call=interrupt.tool_call,
    )


def lifted_id(child_interrupt_id: str, tool_name: str, call_id: str, position: int) -> str:
    """The parent-level id of the child's interrupt ``child_interrupt_id``."""
    return interrupt_id(f"subagent{SEPARATOR}{tool_name}", position, call_id, child_interrupt_id)


def address(interrupt: Interrupt) -> list[str]:
    """The agent path of ``interrupt`` (empty for one raised by the agent itself)."""
    return interrupt.point.split(SEPARATOR)[:-1]
