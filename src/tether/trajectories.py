"""Trajectories: each finished run's system prompt, tool schemas and messages (reasoning
included) appended as one JSON line to a file, for evaluation and fine-tuning data (like
Hermes' ``save_trajectories``). Opt-in: ``Agent(hooks=[Trajectories("runs.jsonl")])``.

What is written goes through the one redaction path (:mod:`tether.governance.redaction`):
the agent's ``ApprovalPolicy`` redactor, the default secret mask, every masked value (of
this agent's calls and of its whole agent tree's) scrubbed from all other text, and
secret-looking tokens masked. A line is bounded (``max_line_bytes``); docs/design.md §11
gives the format.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from tether.control.events import AfterInvocation
from tether.errors import ConfigurationError

if TYPE_CHECKING:
    from tether.agent_ref import AgentRef
    from tether.control.registry import HookRegistry
    from tether.messages import Message

FORMAT: Final = "tether.trajectory/1"
DEFAULT_MAX_LINE_BYTES: Final = 4 * 1024 * 1024
_MIN_LINE_BYTES: Final = 4096
_LAST: Final = 1_000_000  # after every other AfterInvocation hook
_UNFINISHED: Final = frozenset({"interrupt", "paused"})
_log = logging.getLogger("tether")


class Trajectories:
    """A HookProvider that appends each finished run's trajectory to ``path`` (JSONL).

    A run is finished when it ends without suspending (any stop reason but ``interrupt``
    and ``paused``; a suspended run is written when its resume finishes, whole). Each
    line is at most ``max_line_bytes`` UTF-8 bytes: a longer trajectory loses its oldest
    messages after the first (``dropped_messages`` counts them). A write that fails is
    logged as a warning; it never fails the run. Writes run off the event loop, one whole
    line at a time, so several agents may share one file.
    """

    def __init__(
        self, path: str | os.PathLike[str], *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    ) -> None:
        if not isinstance(path, str | os.PathLike) or not str(path):
            raise ConfigurationError(
                f"Trajectories(path=...) takes a file path (str or Path), got {path!r}"
            )
        target = Path(path)
        if target.is_dir():
            raise ConfigurationError(
                f"Trajectories(path={str(path)!r}) is a directory: give the JSONL file to "
                "append to, e.g. Trajectories('trajectories.jsonl')"
            )
        if (
            isinstance(max_line_bytes, bool)
            or not isinstance(max_line_bytes, int)
            or max_line_bytes < _MIN_LINE_BYTES
        ):
            raise ConfigurationError(
                f"Trajectories(max_line_bytes=...) must be an int >= {_MIN_LINE_BYTES}, "
                f"got {max_line_bytes!r}"
            )
        self.path = target
        self.max_line_bytes = max_line_bytes
        self._lock = threading.Lock()

    def register_hooks(self, registry: HookRegistry) -> None:
        registry.add(AfterInvocation, self._finished, _LAST)

    async def _finished(self, event: AfterInvocation) -> None:
        result = event.result
        if result.stop_reason in _UNFINISHED:
            return
        line = trajectory_line(event.agent, result.stop_reason, result.usage.to_dict(), self)
        try:
            await asyncio.to_thread(self._append, line)
        except OSError as exc:
            _log.warning(
                "session %s: trajectory not written to %s: %s", result.session_id, self.path, exc
            )

    def _append(self, line: str) -> None:
        with self._lock, self.path.open("a", encoding="utf-8") as out:
            out.write(line + "\n")


def trajectory_line(
    agent: AgentRef, stop_reason: str, usage: dict[str, Any], options: Trajectories
) -> str:
    """The JSON line of ``agent``'s conversation as it ends, redacted and bounded."""
    from tether.governance.masks import Masker, model_keys
    from tether.governance.redaction import redactor_of, show_messages

    hidden = agent.runtime.hidden
    hidden |= model_keys(agent.runtime.model)
    masker = Masker(redactor_of(agent), {}, hidden)
    messages = [_message(m) for m in show_messages(agent.messages, masker=masker)]
    record: dict[str, Any] = {
        "format": FORMAT,
        "session_id": agent.session_id,
        "agent_path": agent.path,
        "finished_at": time.time(),
        "stop_reason": stop_reason,
        "model": agent.runtime.model.name,
        "system_prompt": None
        if agent.runtime.system_prompt is None
        else masker.text(agent.runtime.system_prompt),
        "tools": masker.scrub([t.spec() for t in agent.runtime.toolset.tools]),
        "usage": usage,
        "dropped_messages": 0,
        "messages": messages,
    }
    return _bounded(record, options.max_line_bytes)


def _message(message: Message) -> dict[str, Any]:
    data = message.to_dict()
    for block in data["content"]:
        images = block.get("images") if isinstance(block, dict) else None
        if images:  # type and size only: base64 data would dwarf the line bound
            block["images"] = [
                {"media_type": i.get("media_type"), "bytes": len(i.get("data") or "") * 3 // 4}
                for i in images
            ]
    return data


def _bounded(record: dict[str, Any], limit: int) -> str:
    """The record as one line of at most ``limit`` bytes: the oldest messages after the
    first go first (a message longer than the room left is dropped whole); a header
    (system prompt, tool schemas) too long by itself keeps the tool names and the start
    of the system prompt."""
    line = _dumps(record)
    messages: list[Any] = record["messages"]
    if len(line.encode()) <= limit:
        return line
    if len(_dumps({**record, "messages": []}).encode()) > limit // 2:
        prompt = record["system_prompt"]
        record = {
            **record,
            "system_prompt": None if prompt is None else prompt[: limit // 8],
            "tools": [{"name": t.get("name")} for t in record["tools"] if isinstance(t, dict)],
            "header_clipped": True,
        }
    sizes = [len(_dumps(m).encode()) + 1 for m in messages]
    room = limit - len(_dumps({**record, "messages": []}).encode()) - 16  # count's digits
    keep_first = bool(messages) and sizes[0] <= room
    budget = room - (sizes[0] if keep_first else 0)
    tail: list[Any] = []
    for message, size in zip(reversed(messages[1:]), reversed(sizes[1:]), strict=True):
        if size > budget:
            break
        tail.insert(0, message)
        budget -= size
    kept = ([messages[0]] if keep_first else []) + tail
    record = {**record, "messages": kept, "dropped_messages": len(messages) - len(kept)}
    return _dumps(record)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=repr, separators=(",", ":"))
