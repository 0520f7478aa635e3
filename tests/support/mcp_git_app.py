"""A durable agent whose tools come from mcp-server-git, run in child processes.

Usage: python mcp_git_app.py DB SESSION_ID REPO start | resume ANSWERS_JSON
Prints one JSON line: the stop reason, the pending interrupts and the final text.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tether import Agent
from tether.durable import SQLiteStore
from tether.mcp import ConfirmDestructive, MCPServer
from tether.models import ScriptedModel

GIT_SERVER = str(Path(sys.executable).parent / "mcp-server-git")


def build(
    db: str | None, session_id: str | None, repo: str, git: MCPServer, **options: Any
) -> Agent:
    def script(messages: list[Any], specs: list[dict[str, Any]]) -> Any:
        if messages[-1].role == "user":
            return {
                "tool_calls": [
                    {"name": "git_status", "args": {"repo_path": repo}},
                    {"name": "git_commit", "args": {"repo_path": repo, "message": "add new.txt"}},
                ]
            }
        return "done: " + " | ".join(r.content for r in messages[-1].tool_results)

    return Agent(
        ScriptedModel(script),
        tools=git.tools(),
        interventions=[ConfirmDestructive(writes=True)],
        store=SQLiteStore(db) if db else None,
        session_id=session_id,
        **options,
    )


def main() -> None:
    db, session_id, repo, mode = sys.argv[1:5]
    with MCPServer.stdio(GIT_SERVER, ["--repository", repo]) as git:
        agent = build(db, session_id, repo, git)
        if mode == "start":
            result = agent("commit the staged file")
        else:
            result = agent.resume(json.loads(sys.argv[5]))
        print(
            json.dumps(
                {
                    "stop_reason": result.stop_reason,
                    "interrupts": [i.to_dict() for i in result.interrupts],
                    "text": result.message.text if result.message else None,
                }
            )
        )


if __name__ == "__main__":
    main()
