"""The demo's operations agent: file tools over one workspace, a delete policy, a script."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tether.control import BeforeToolCall, Confirm, Deny, InterventionHandler
from tether.messages import Message
from tether.models import ScriptedModel
from tether.tools import Tool, tool

TASK = (
    "Disk is almost full on this host. "
    "Free some space in the workspace, but keep anything important."
)
PROTECTED_SUFFIXES = (".yaml", ".yml", ".toml", ".env")

SEED_FILES = {
    "app.log": "2026-11-29 12:00:01 INFO service started\n" * 4,
    "app.log.1": "2026-11-28 23:59:59 INFO rotated\n" * 40,
    "app.log.2": "2026-11-27 23:59:59 INFO rotated\n" * 40,
    "config.yaml": "port: 8080\nreplicas: 2\n",
    "notes.txt": "remember to renew the TLS certificate\n",
}


def seed_workspace(root: Path) -> None:
    """Create the demo files in ``root``."""
    for name, text in SEED_FILES.items():
        (root / name).write_text(text, encoding="utf-8")


def file_tools(root: Path) -> list[Tool]:
    """list/read/delete tools confined to ``root``."""

    def resolve(path: str) -> Path:
        target = (root / path).resolve()
        if root.resolve() not in (target, *target.parents):
            raise PermissionError(f"{path!r} is outside the workspace")
        return target

    @tool(read_only=True)
    def list_files() -> list[dict[str, Any]]:
        """List the files in the workspace with their sizes in bytes."""
        return [{"name": p.name, "bytes": p.stat().st_size} for p in sorted(root.iterdir())]

    @tool(read_only=True, path_params=("path",))
    def read_file(path: str, max_chars: int = 200) -> str:
        """Read the start of a file.

        Args:
            path: File name relative to the workspace.
            max_chars: How many characters to return at most.
        """
        return resolve(path).read_text(encoding="utf-8")[:max_chars]

    @tool(path_params=("path",))
    def delete_file(path: str) -> str:
        """Delete a file from the workspace.

        Args:
            path: File name relative to the workspace.
        """
        target = resolve(path)
        size = target.stat().st_size
        target.unlink()
        return f"deleted {path} ({size} bytes freed)"

    return [list_files, read_file, delete_file]


class DeletePolicy(InterventionHandler):
    """Protected files may never be deleted; every other delete needs a human's yes."""

    name = "delete-policy"

    def before_tool_call(self, event: BeforeToolCall) -> Deny | Confirm | None:
        if event.tool_call.name != "delete_file":
            return None
        path = str(event.tool_call.arguments.get("path", ""))
        if path.endswith(PROTECTED_SUFFIXES):
            return Deny(f"{path} is a configuration file; configuration files are protected")
        return Confirm(f"Delete {path} from the workspace?")


def demo_model() -> ScriptedModel:
    """The scripted operations model; its last turn reports what really happened."""

    def script(messages: list[Message], tools: list[dict[str, Any]]) -> dict[str, Any]:
        turn = sum(1 for m in messages if m.role == "assistant")
        if turn == 0:
            return {
                "text": "I'll start by looking at what is in the workspace.",
                "tool_calls": [{"name": "list_files", "args": {}}],
            }
        if turn == 1:
            return {
                "text": "Two rotated logs look large. Let me check what they contain.",
                "tool_calls": [
                    {"name": "read_file", "args": {"path": "app.log.1", "max_chars": 60}},
                    {"name": "read_file", "args": {"path": "app.log.2", "max_chars": 60}},
                ],
            }
        if turn == 2:
            return {
                "text": "They are old rotated logs. I'll delete them, and the stale config too.",
                "tool_calls": [
                    {"name": "delete_file", "args": {"path": "app.log.1"}},
                    {"name": "delete_file", "args": {"path": "app.log.2"}},
                    {"name": "delete_file", "args": {"path": "config.yaml"}},
                ],
            }
        return {"text": _summary(messages[-1])}

    return ScriptedModel(script, chunk_size=12, name="scripted:ops-demo")


def _summary(last: Message) -> str:
    done = [r for r in last.tool_results if not r.is_error]
    refused = [r for r in last.tool_results if r.is_error]
    lines = [f"Done. {len(done)} delete(s) went through."]
    lines += [f"- {r.content}" for r in done]
    if refused:
        lines.append(f"{len(refused)} delete(s) did not happen:")
        lines += [f"- {r.content}" for r in refused]
    return "\n".join(lines)


def describe_args(arguments: dict[str, Any]) -> str:
    """Compact one-line JSON of tool arguments for the transcript."""
    return json.dumps(arguments, ensure_ascii=False, separators=(", ", ": "))
