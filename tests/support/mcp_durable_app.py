"""A durable agent calling one fixture MCP tool, killed mid-call by the test and resumed.

Usage: python mcp_durable_app.py DB SESSION TOOL ARG SLEEP start | resume ANSWERS_JSON [deny]
Prints ``CALLING`` when the tool call starts, then one JSON line with the result.
``deny`` as last argument leaves TOOL out of the server's tools (it "disappeared").
With FIXTURE_URL set, the fixture server is reached over streamable HTTP there instead
(TOOL ``wait`` is called with ``path`` ARG and ``seconds`` SLEEP).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from tether import Agent
from tether.control import BeforeToolCall
from tether.durable import SQLiteStore
from tether.mcp import MCPServer
from tether.models import ScriptedModel

FIXTURE = str(Path(__file__).parent / "mcp_fixture_server.py")


def main() -> None:
    db, session_id, name, arg, sleep, mode, *rest = sys.argv[1:]
    deny = [name] if rest[-1:] == ["deny"] else []
    key = "path" if name in ("slow_write", "wait") else "name"
    args: dict[str, Any] = {key: arg}
    if name == "wait":
        args["seconds"] = float(sleep)

    def script(messages: list[Any], specs: list[dict[str, Any]]) -> Any:
        if messages[-1].role == "user":
            return {"tool_calls": [{"name": name, "args": args}]}
        return "done: " + messages[-1].tool_results[0].content

    url = os.environ.get("FIXTURE_URL")
    server = (
        MCPServer.http(url, deny=deny)
        if url
        else MCPServer.stdio(
            sys.executable, [FIXTURE, "stdio"], env={"FIXTURE_SLEEP": sleep}, deny=deny
        )
    )
    with server:
        agent = Agent(
            ScriptedModel(script),
            tools=server.tools(),
            store=SQLiteStore(db),
            session_id=session_id,
        )

        @agent.on(BeforeToolCall)
        def started(event: BeforeToolCall) -> None:
            print("CALLING", flush=True)

        if mode == "start":
            result = agent("go")
        else:
            result = agent.resume(json.loads(rest[0]) if rest and rest[0] != "deny" else None)
        print(
            json.dumps(
                {
                    "stop_reason": result.stop_reason,
                    "interrupts": [i.to_dict() for i in result.interrupts],
                    "text": result.message.text if result.message else None,
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()
