"""A three-level agent tree (planner -> researcher -> two parallel coders), one step per process.

The planner's policy (Confirm before ``write``) is inherited by every coder; the coders'
``write`` appends to EFFECTS, so a repeated side effect shows. Children are built with
store=None: their sessions live in the planner's SQLite store.

Usage: python agent_tree.py DB EFFECTS start | resume ANSWERS_JSON | race ANSWERS_JSON GO_FILE
Prints one JSON line: stop_reason, text, interrupts (id, name, point, source), or
{"error": class name, "message": ...} when the resume is refused.
With TETHER_TREE_DEPTH=2 the planner runs the two coders itself (no researcher).
With TETHER_TREE_CRASH=1 the tree runs without the Confirm and with 1 s leases, and
the coder writing TETHER_TREE_HANG hangs after its write (the test SIGKILLs it there).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tether import Agent, Execution, TetherError, tool
from tether.agents import as_tool
from tether.control import BeforeToolCall, Confirm, InterventionHandler
from tether.durable import PostgresStore, SQLiteStore, Store
from tether.models import ScriptedModel


class ConfirmWrites(InterventionHandler):
    def before_tool_call(self, event: BeforeToolCall) -> Confirm | None:
        if event.tool_call.name == "write":
            return Confirm(f"write {event.tool_call.arguments.get('text')!r}?")
        return None


def _last_tool_text(messages: list[Any]) -> str:
    return " + ".join(r.content for r in messages[-1].tool_results)


def planner_turn(messages: list[Any], specs: list[Any]) -> Any:
    if messages[-1].role == "tool":
        return f"planner done: {_last_tool_text(messages)}"
    return {"tool_calls": [{"id": "p1", "name": "researcher", "args": {"task": "build it"}}]}


def researcher_turn(messages: list[Any], specs: list[Any], who: str = "researcher") -> Any:
    if messages[-1].role == "tool":
        return f"{who} done: {_last_tool_text(messages)}"
    return {
        "tool_calls": [
            {"id": "k1", "name": "coder", "args": {"task": "a"}},
            {"id": "k2", "name": "coder", "args": {"task": "b"}},
        ]
    }


def flat_planner_turn(messages: list[Any], specs: list[Any]) -> Any:
    return researcher_turn(messages, specs, "planner")


def coder_turn(messages: list[Any], specs: list[Any]) -> Any:
    if messages[-1].role == "tool":
        return f"wrote {messages[0].text}"
    return {"tool_calls": [{"id": "w1", "name": "write", "args": {"text": messages[0].text}}]}


def open_store(db: str) -> Store:
    """DB is a SQLite path or a PostgreSQL conninfo / URL."""
    if db.startswith("postgres") or "=" in db:
        return PostgresStore(db, max_size=2)
    return SQLiteStore(db)


def build(
    db: str | None,
    effects: Path,
    lease_ttl: float = 30.0,
    confirm: bool = True,
    hang_on: str | None = None,
    policies: tuple[InterventionHandler, ...] = (),
    depth: int = 3,
) -> Agent:
    execution = Execution(lease_ttl=lease_ttl)

    @tool
    def write(text: str) -> str:
        """Write text (a side effect that must happen once)."""
        with effects.open("a", encoding="utf-8") as f:
            f.write(f"{text}\n")
        if text == hang_on:
            time.sleep(3600)  # killed here, after the side effect, before its result is saved
        return f"ok {text}"

    def coder() -> Agent:
        return Agent(model=ScriptedModel(coder_turn), tools=[write], execution=execution)

    def researcher() -> Agent:
        return Agent(
            model=ScriptedModel(researcher_turn),
            tools=[as_tool(coder, name="coder", parallel=True)],
            execution=execution,
        )

    if depth == 2:
        model, tools = (
            ScriptedModel(flat_planner_turn),
            [as_tool(coder, name="coder", parallel=True)],
        )
    else:
        model, tools = ScriptedModel(planner_turn), [as_tool(researcher, name="researcher")]
    return Agent(
        model=model,
        tools=tools,
        interventions=([ConfirmWrites()] if confirm else []) + list(policies),
        store=open_store(db) if db is not None else None,
        session_id="tree-1" if db is not None else None,
        execution=execution,
    )


def report(result: Any) -> str:
    return json.dumps(
        {
            "stop_reason": result.stop_reason,
            "text": result.text,
            "interrupts": [
                {"id": i.id, "name": i.name, "point": i.point, "source": i.source}
                for i in result.interrupts
            ],
        }
    )


def main() -> None:
    db, effects, mode, *rest = sys.argv[1:]
    depth = int(os.environ.get("TETHER_TREE_DEPTH", "3"))
    if os.environ.get("TETHER_TREE_CRASH"):
        hang = os.environ.get("TETHER_TREE_HANG") or None
        agent = build(db, Path(effects), lease_ttl=1.0, confirm=False, hang_on=hang, depth=depth)
    else:
        agent = build(db, Path(effects), depth=depth)
    if mode == "race":  # wait at the barrier (a file), then resume; report a refusal
        go = Path(rest[1])
        Path(f"{go}.ready.{os.getpid()}").touch()
        while not go.exists():
            time.sleep(0.002)
        try:
            result = agent.resume(json.loads(rest[0]))
        except TetherError as exc:
            print(json.dumps({"error": type(exc).__name__}), flush=True)
            return
    elif mode == "start":
        result = agent("plan")
    else:
        try:
            result = agent.resume(json.loads(rest[0]))
        except TetherError as exc:
            print(json.dumps({"error": type(exc).__name__, "message": str(exc)}), flush=True)
            return
    print(report(result), flush=True)


def step(db: str | Path, effects: Path, *args: str, depth: int | None = None) -> dict[str, Any]:
    """Run one step of this tree in a fresh process (``args``: start | resume ANSWERS_JSON);
    the step must succeed; returns the JSON line it printed. ``depth`` sets TETHER_TREE_DEPTH."""
    env = None if depth is None else {**os.environ, "TETHER_TREE_DEPTH": str(depth)}
    done = subprocess.run(
        [sys.executable, __file__, str(db), str(effects), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


if __name__ == "__main__":
    main()
