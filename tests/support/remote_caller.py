"""A durable caller of a remote A2A agent, one step per process (the crash tests kill it).

Usage: python remote_caller.py DB URL TASK start | resume ANSWERS_JSON
(``TETHER_REMOTE_TOKEN``: the bearer token to call the remote with, if it needs one.)
Prints one JSON line: stop_reason, text, and the interrupts (id, point, source).
"""

from __future__ import annotations

import json
import os
import sys

from remote_agents import script

from tether import Agent, Execution
from tether.a2a import RemoteAgent
from tether.durable import SQLiteStore
from tether.models import ScriptedModel

SESSION = "remote-job"


def main() -> None:
    db, url, task, mode, *rest = sys.argv[1:]
    agent = Agent(
        model=ScriptedModel(script(task)),
        tools=[
            RemoteAgent(
                url,
                token=os.environ.get("TETHER_REMOTE_TOKEN"),
                name="painter",
                description="Paints things.",
            )
        ],
        store=SQLiteStore(db),
        session_id=SESSION,
        execution=Execution(lease_ttl=1.0),
    )
    result = agent("paint, please") if mode == "start" else agent.resume(json.loads(rest[0]))
    out = {
        "stop_reason": result.stop_reason,
        "text": result.text,
        "interrupts": [
            {"id": i.id, "point": i.point, "source": i.source} for i in result.interrupts
        ],
    }
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
