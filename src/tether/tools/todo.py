"""The built-in ``todo`` tool: the session's task list, kept in the journaled session state.

The list lives under one reserved key of the session state (:data:`TODO_KEY`) as plain
JSON: ``{"next": 4, "items": [{"id": "1", "text": "...", "status": "pending"}, ...]}``,
so it is journaled with the state and survives a resume in another process; after a
context compression the model's view carries it again (``tether/context/todo_note.py``).
Item text comes from the model: it is bounded on the way in and has its control,
bidi and invisible characters stripped whenever it is shown.
"""

from __future__ import annotations

import unicodedata
from typing import Any, Literal

from tether.errors import SessionStateError, ToolArgumentError
from tether.tools.base import Tool
from tether.tools.context import ToolContext

TODO = "todo"
TODO_KEY = "__tether_todo__"
"""Session-state key holding the task list."""
MAX_ITEMS = 50
"""Items a list holds, finished ones included (``clear`` removes those)."""
MAX_TEXT = 500
"""Characters in one item's text."""
STATUSES = ("pending", "in_progress", "completed", "cancelled")
"""Hermes' four statuses (its ``todo`` tool names them so)."""
ACTIVE = frozenset({"pending", "in_progress"})
_MARKS = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]", "cancelled": "[~]"}
_HIDDEN = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})

Action = Literal["create", "update", "list", "clear"]
Status = Literal["pending", "in_progress", "completed", "cancelled"]


def todo(name: str = TODO) -> Tool:
    """The opt-in ``todo`` tool (``Agent(tools=[..., todo()])``): one tool whose ``action``
    creates items, updates an item's status, lists them, or clears the finished ones.
    Ids are ``"1"``, ``"2"``, ... in creation order and never reused in a session."""

    async def run(
        context: ToolContext,
        action: Action,
        items: list[str] | None = None,
        id: str | None = None,
        status: Status | None = None,
    ) -> str:
        """Keep a task list for multi-step work: plan the steps, mark one in_progress at a
        time, mark each completed once it is verified done. Every call returns the list.

        Args:
            action: create (add `items`), update (set the `status` of item `id`), list,
                or clear (remove completed and cancelled items).
            items: For create: the new tasks' texts, one short task each (at most 500
                characters; the list holds at most 50 items).
            id: For update: the id of the item to change.
            status: For update: pending, in_progress, completed or cancelled.
        """
        # No await in here: the read-modify-write of the list is atomic on the loop.
        current = stored(context.state)
        if action == "create":
            updated = _create(current, items)
        elif action == "update":
            updated = _update(current, id, status)
        elif action == "clear":
            updated = {**current, "items": [i for i in current["items"] if i["status"] in ACTIVE]}
        else:
            return render(current["items"])
        context.state[TODO_KEY] = updated
        return render(updated["items"])

    return Tool(run, name=name, idempotent=True)


def stored(state: dict[str, Any]) -> dict[str, Any]:
    """The task list in ``state`` (an empty one when there is none); SessionStateError
    when the key holds something else (nothing is overwritten)."""
    value = state.get(TODO_KEY)
    if value is None:
        return {"next": 1, "items": []}
    problem = _malformed(value)
    if problem is not None:
        raise SessionStateError(
            f"the session state's {TODO_KEY!r} is not a task list ({problem}); it was left "
            f"as it is: remove or fix agent.state[{TODO_KEY!r}]"
        )
    return dict(value)


def items_of(value: object) -> list[dict[str, str]] | None:
    """The items of a stored task list (at most :data:`MAX_ITEMS`); None when ``value``
    is not a well-formed list."""
    if _malformed(value) is not None:
        return None
    assert isinstance(value, dict)
    found: list[dict[str, str]] = value["items"][:MAX_ITEMS]
    return found


def render(items: list[dict[str, str]]) -> str:
    """The list as the tool's result: one line per item, then the room left."""
    if not items:
        return f"The task list is empty (room for {MAX_ITEMS} items)."
    counts = ", ".join(
        f"{n} {s}" for s in STATUSES if (n := sum(1 for i in items if i["status"] == s))
    )
    lines = [f"Task list ({counts}; room for {max(0, MAX_ITEMS - len(items))} more):"]
    lines.extend(line(item) for item in items)
    return "\n".join(lines)


def line(item: dict[str, str]) -> str:
    """One item as a line of plain text (its text on one line, hidden characters gone)."""
    status = item["status"]
    return f"- {_MARKS.get(status, '[?]')} {shown(item['id'])}. {shown(item['text'])} ({status})"


def shown(text: str, limit: int | None = MAX_TEXT) -> str:
    """``text`` (at most ``limit`` characters, None: all) on one line, with control, bidi
    and other invisible characters stripped."""
    text = text[:limit]
    if text.isascii() and text.isprintable():
        return text
    kept = []
    for char in text:
        if char in "\n\r\t":
            kept.append(" ")
        elif unicodedata.category(char) not in _HIDDEN:
            kept.append(char)
    return "".join(kept)


def _create(current: dict[str, Any], texts: list[str] | None) -> dict[str, Any]:
    if not texts:
        raise ToolArgumentError("todo create needs `items`: a list of one or more task texts")
    existing: list[dict[str, str]] = current["items"]
    room = MAX_ITEMS - len(existing)
    if len(texts) > room:
        finished = sum(1 for i in existing if i["status"] not in ACTIVE)
        clear = f"; clear removes the {finished} finished one(s)" if finished else ""
        raise ToolArgumentError(
            f"todo: the list holds at most {MAX_ITEMS} items and has {len(existing)}: room "
            f"for {max(0, room)} more, {len(texts)} asked for; nothing was created{clear}"
        )
    made: list[dict[str, str]] = []
    number = current["next"]
    for index, text in enumerate(texts, 1):
        text = text.strip()
        if not text:
            raise ToolArgumentError(f"todo: item {index} is empty; nothing was created")
        if len(text) > MAX_TEXT:
            raise ToolArgumentError(
                f"todo: item {index} has {len(text)} characters, {len(text) - MAX_TEXT} over "
                f"the {MAX_TEXT} an item holds; nothing was created"
            )
        made.append({"id": str(number), "text": text, "status": "pending"})
        number += 1
    return {"next": number, "items": [*existing, *made]}


def _update(current: dict[str, Any], item: str | None, status: str | None) -> dict[str, Any]:
    if item is None or status is None:
        raise ToolArgumentError("todo update needs `id` (an item's id) and `status`")
    items: list[dict[str, str]] = current["items"]
    wanted = item.strip()
    for index, found in enumerate(items):
        if found["id"] == wanted:
            changed = [*items]
            changed[index] = {**found, "status": status}
            return {**current, "items": changed}
    ids = ", ".join(i["id"] for i in items) or "none: the list is empty"
    raise ToolArgumentError(f"todo: no item has id {shown(wanted[:40])!r}; the ids are {ids}")


def _malformed(value: object) -> str | None:
    """What is wrong with a stored task list, or None."""
    if not isinstance(value, dict):
        return f"a {type(value).__name__}, not a dict"
    number, items = value.get("next"), value.get("items")
    if type(number) is not int or number < 1:
        return f"'next' is {number!r}, not a positive int"
    if not isinstance(items, list):
        return "'items' is not a list"
    for item in items:
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("id"), str)
            or not isinstance(item.get("text"), str)
            or item.get("status") not in STATUSES
        ):
            return f"an item is not {{'id': str, 'text': str, 'status': one of {STATUSES}}}"
    return None
