"""``tether sessions show``: a session's header, pending interrupts and transcript in the
terminal (each call that ran with other arguments shows them), and its ``--json``."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.padding import Padding
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from tether.ops.cli_common import usd, when
from tether.ops.sessions_table import status_text, summary_dict
from tether.ops.terminal import safe

if TYPE_CHECKING:
    from tether.durable import SessionRecord
    from tether.governance.redaction import EditedCall
    from tether.messages import ContentBlock, Message
    from tether.session import SessionView

CLIP = 500
"""Characters of one text block, tool argument list or tool result shown without --full."""
ROLE_STYLE = {
    "system": "bold yellow",
    "user": "bold green",
    "assistant": "bold cyan",
    "tool": "bold magenta",
}


def session_dict(record: SessionRecord, view: SessionView) -> dict[str, Any]:
    """``sessions show --json``: what the text view shows, as one JSON object."""
    from tether.messages import _block_to_dict

    lease = record.lease
    held = lease is not None and lease.expires_at > time.time()
    open_batch = None
    if view.pending is not None:
        calls, results = view.pending
        open_batch = [
            {
                "call": _block_to_dict(call),
                "result": None if result is None else _block_to_dict(result),
                "in_doubt": result is None and call.id in view.intents,
            }
            for call, result in zip(calls, results, strict=True)
        ]
    return {
        **summary_dict(record),
        "lease_holder": lease.holder if held and lease is not None else None,
        "lease_expires_at": lease.expires_at if held and lease is not None else None,
        "state_keys": sorted(view.state),
        "interrupts": [i.to_dict() for i in view.interrupts],
        "messages": [m.to_dict() for m in view.messages],
        "open_batch": open_batch,
    }


def header(record: SessionRecord, view: SessionView) -> Table:
    """The session's id, status, entries, times, lease and state keys."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    grid.add_row("session", safe(record.session_id, one_line=True))
    grid.add_row("status", status_text(record.status))
    grid.add_row("entries", str(record.version))
    grid.add_row("created", when(record.created_at))
    grid.add_row("updated", when(record.updated_at))
    lease = record.lease
    if lease is not None and lease.expires_at > time.time():
        grid.add_row("lease", safe(f"held by {lease.holder} until {when(lease.expires_at)}"))
    if view.state:
        grid.add_row("state", safe(", ".join(sorted(view.state))))
    return grid


def interrupts_table(view: SessionView, full: bool) -> Table:
    """The interrupts the session waits for, with their tool calls."""
    table = Table(title="pending interrupts", title_justify="left")
    for name in ("id", "name", "source", "reason", "tool call"):
        table.add_column(name, overflow="fold")
    for item in view.interrupts:
        reason = item.reason if isinstance(item.reason, str) else json.dumps(item.reason)
        call = item.tool_call
        table.add_row(
            safe(item.id, "bold"),
            safe(item.name),
            safe(item.source),
            clip_text(reason, full),
            Text("-")
            if call is None
            else clip_text(f"{call.name}({json.dumps(call.arguments)})", full)
            + safe(f"\n{call.id}"),
        )
    return table


def clip_text(text: str, full: bool, style: str = "") -> Text:
    """``text`` escaped, cut to :data:`CLIP` characters unless ``full``."""
    if full or len(text) <= CLIP:
        return safe(text, style)
    note = f" … [{len(text) - CLIP} more characters; --full shows all]"
    return safe(text[:CLIP], style) + Text(note, style="dim italic")


def print_message(
    console: Console,
    index: int,
    message: Message,
    full: bool,
    edits: dict[str, EditedCall] | None = None,
) -> None:
    """One transcript message: its role and usage, then its blocks."""
    head = Text(f"{index:>3} ", style="dim") + Text(message.role, style=ROLE_STYLE[message.role])
    if message.usage is not None:
        usage = message.usage
        head += Text(f"  {usage.input_tokens} in / {usage.output_tokens} out tokens", style="dim")
        if usage.cost is not None:
            head += Text(f", {usd(usage.cost)}", style="dim")
    console.print(head)
    for block in message.content:
        console.print(Padding(block_line(block, full), (0, 0, 0, 6)))
        edit = (edits or {}).get(block.id) if block.type == "tool_call" else None
        if edit is not None:
            console.print(Padding(edited_line(edit, full), (0, 0, 0, 8)))


def edited_line(edit: EditedCall, full: bool) -> Text:
    """The arguments a call ran with when they were not the model's, and who changed them
    (a human's edit, a policy's Transform)."""
    at = f" at {when(edit.decided_at)}" if edit.decided_at else ""
    args = clip_text(json.dumps(edit.arguments, ensure_ascii=False), full)
    if edit.by == ("edit",):
        who = edit.decided_by or "a resume answer"
        return Text.assemble(
            ("ran with edited arguments ", "bold yellow"), f"(by {who}{at}): ", args
        )
    return Text.assemble(("ran with ", "bold yellow"), args, safe(f" ({edit.label}{at})"))


def block_line(block: ContentBlock, full: bool) -> Text:
    """One content block of a message: text, reasoning, a tool call or a result."""
    from tether.messages import ReasoningBlock, TextBlock, ToolCall

    if isinstance(block, TextBlock):
        return clip_text(block.text, full)
    if isinstance(block, ReasoningBlock):
        if block.redacted:
            return Text("(redacted reasoning)", style="dim italic")
        return Text("reasoning: ", style="dim italic") + clip_text(block.text, full, "dim italic")
    if isinstance(block, ToolCall):
        args = clip_text(json.dumps(block.arguments, ensure_ascii=False), full)
        call = Text.assemble(("→ ", "cyan"), safe(block.name, "bold"), "(", args, ")")
        return call + safe(f"  {block.id}", "dim")
    style = "red" if block.is_error else "green"
    head = Text("← ", style=style) + safe(block.name, "bold")
    head += safe(f" [{block.status}]", style) + safe(f"  {block.tool_call_id}", "dim")
    inline = len(block.content) <= 60 and "\n" not in block.content
    return head + (": " if inline else "\n") + clip_text(block.content, full)


def print_open_batch(console: Console, view: SessionView, full: bool) -> None:
    """The tool batch the session stopped in: each call's result, wait or doubt."""
    assert view.pending is not None
    calls, results = view.pending
    waiting = {i.tool_call.id: i.id for i in view.interrupts if i.tool_call is not None}
    console.print(Rule("open tool batch (results so far)", style="dim"))
    for call, result in zip(calls, results, strict=True):
        if result is not None:
            line = block_line(result, full)
        elif call.id in waiting:
            line = safe(f"… {call.name}  {call.id}: waiting for interrupt {waiting[call.id]}")
        elif call.id in view.intents:
            line = safe(f"? {call.name}  {call.id}: started, no result (in doubt)", "yellow")
        else:
            line = safe(f"· {call.name}  {call.id}: not run yet", "dim")
        console.print(Padding(line, (0, 0, 0, 6)))
