"""Group a batch of tool calls into steps whose members can run concurrently."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from tether.messages import ToolCall
from tether.tools.base import Tool


def plan_batches(calls: Sequence[ToolCall], tools: Mapping[str, Tool]) -> list[list[int]]:
    """Indices of ``calls`` in groups: groups run in order, calls within a group concurrently.

    The model's order is kept: each call joins the current group if it conflicts with
    no member, else starts the next group. Two calls conflict when either tool is
    interactive, never when both are read-only, and otherwise unless both tools
    declare ``path_params`` and their paths are disjoint (a missing or non-string
    path overlaps everything; a list of strings is several paths). A call to an
    unknown tool runs alone.
    """
    groups: list[list[int]] = []
    members: list[_Call] = []
    for index, call in enumerate(calls):
        tool = tools.get(call.name)
        entry = _Call(tool, call) if tool is not None else None
        if entry is not None and members and not any(entry.conflicts(m) for m in members):
            groups[-1].append(index)
            members.append(entry)
        else:
            groups.append([index])
            # An unknown tool leaves `members` empty, so the next call starts a new group.
            members = [entry] if entry is not None else []
    return groups


class _Call:
    """A call with the normalized paths it touches (None in ``paths``: unknown path)."""

    __slots__ = ("paths", "tool")

    def __init__(self, tool: Tool, call: ToolCall) -> None:
        self.tool = tool
        self.paths = _paths(call, tool)

    def conflicts(self, other: _Call) -> bool:
        a, b = self.tool, other.tool
        if a.interactive or b.interactive:
            return True
        if a.read_only and b.read_only:
            return False
        if not (a.path_params and b.path_params):
            return True
        return any(_overlap(p, q) for p in self.paths for q in other.paths)


def _paths(call: ToolCall, tool: Tool) -> list[str | None]:
    arguments = call.arguments if isinstance(call.arguments, Mapping) else {}
    paths: list[str | None] = []
    for param in tool.path_params:
        value = arguments.get(param)
        for item in value if isinstance(value, list | tuple) else [value]:
            paths.append(_normalize(item) if isinstance(item, str) else None)
    return paths


def _normalize(path: str) -> str:
    # Absolute so that "notes.txt" and "/cwd/notes.txt" are seen as the same file.
    return os.path.normcase(os.path.abspath(path))


def _overlap(a: str | None, b: str | None) -> bool:
    """Same path, or one is an ancestor directory of the other."""
    if a is None or b is None:
        return True
    if a == b:
        return True
    shorter, longer = (a, b) if len(a) < len(b) else (b, a)
    return longer.startswith(shorter if shorter.endswith(os.sep) else shorter + os.sep)
