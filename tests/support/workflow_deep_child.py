"""A workflow three levels deep (Sequential > Parallel > Sequential > agent), one step per
process: python workflow_deep_child.py DB EFFECTS start | resume ANSWERS_JSON."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from workflow_agents import ConfirmWrites, writer

from tether import Agent, tool
from tether.durable import SQLiteStore
from tether.workflows import Parallel, Sequential


def main() -> None:
    db, effects, mode, *rest = sys.argv[1:]

    @tool
    def write(text: str) -> str:
        """Write text."""
        with Path(effects).open("a", encoding="utf-8") as f:
            f.write(f"{text}\n")
        return f"ok {text}"

    middle = Sequential(Agent(writer("legal"), tools=[write], name="legal"), name="middle")
    outer = Parallel(middle, lambda step: "side", name="outer")
    top = Sequential(
        outer, store=SQLiteStore(db), session_id="deep-1", interventions=[ConfirmWrites()]
    )
    result = top.run("go") if mode == "start" else top.resume(json.loads(rest[0]))
    print(
        json.dumps(
            {
                "stop_reason": result.stop_reason,
                "text": result.text,
                "interrupts": [{"id": i.id, "name": i.name} for i in result.interrupts],
            }
        )
    )


if __name__ == "__main__":
    main()
