"""Scripted agents and a review workflow for the workflow tests (also run as a child process).

The review workflow: ``draft`` (a function, counts its runs in EFFECTS) -> ``review``, a
Parallel of ``legal`` and ``tech`` (agents each calling a non-idempotent ``write`` that
the workflow's policy confirms; ``tech`` only when TETHER_WF_TECH_ASKS=1) ->
``summary`` (an agent). Its session lives in the store DB under ``wf-1``.

Usage: python workflow_agents.py DB EFFECTS start | resume ANSWERS_JSON
Prints one JSON line: stop_reason, text, interrupts (id, name, point, source), or the error.
With TETHER_WF_CRASH=1 the workflow runs without the Confirm and with 1 s leases, and the
``write`` of TETHER_WF_HANG hangs after its side effect (the test SIGKILLs it there).
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
from tether.control import BeforeToolCall, Confirm, InterventionHandler
from tether.durable import PostgresStore, SQLiteStore, Store
from tether.models import ScriptedModel
from tether.workflows import Parallel, Sequential, StepContext, Update


def echo(prefix: str) -> ScriptedModel:
    """A model answering ``<prefix>: <its task>``."""
    return ScriptedModel(lambda messages, specs: f"{prefix}: {messages[0].text}")


def writer(prefix: str) -> ScriptedModel:
    """A model that calls ``write`` once with its task, then answers ``<prefix> wrote``."""

    def turn(messages: list[Any], specs: list[Any]) -> Any:
        if messages[-1].role == "tool":
            return f"{prefix} wrote ({messages[-1].tool_results[0].content})"
        return {"tool_calls": [{"id": "w1", "name": "write", "args": {"text": prefix}}]}

    return ScriptedModel(turn)


class ConfirmWrites(InterventionHandler):
    """Every ``write`` waits for a human (the workflow's policy, inherited by its nodes)."""

    def before_tool_call(self, event: BeforeToolCall) -> Confirm | None:
        if event.tool_call.name == "write":
            return Confirm(f"write {event.tool_call.arguments.get('text')!r}?")
        return None


def open_store(db: str) -> Store:
    """DB is a SQLite path or a PostgreSQL conninfo / URL."""
    if db.startswith("postgres") or "=" in db:
        return PostgresStore(db, max_size=2)
    return SQLiteStore(db)


def review_workflow(
    store: Store | None,
    effects: Path,
    *,
    tech_asks: bool = False,
    confirm: bool = True,
    hang_on: str | None = None,
    **options: Any,
) -> Sequential:
    @tool
    def write(text: str) -> str:
        """Write text (a side effect that must happen once)."""
        with effects.open("a", encoding="utf-8") as f:
            f.write(f"{text}\n")
        if text == hang_on:
            time.sleep(3600)  # killed here, after the side effect, before its result is saved
        return f"ok {text}"

    def draft(step: StepContext) -> Update:
        with effects.open("a", encoding="utf-8") as f:
            f.write("draft\n")
        return Update(f"draft of {step.input}", {"drafted": True})

    run_as = options.get("execution")  # the nodes' leases too (a crash test's 1 s)
    legal = Agent(writer("legal"), tools=[write], name="legal", execution=run_as)
    tech = Agent(
        writer("tech") if tech_asks else echo("tech"), tools=[write], name="tech", execution=run_as
    )
    summary = Agent(echo("summary"), name="summary", execution=run_as)
    return Sequential(
        draft,
        ("review", Parallel(legal, tech)),
        summary,
        name="pipeline",
        store=store,
        session_id="wf-1" if store is not None else None,
        interventions=[ConfirmWrites()] if confirm else [],
        **options,
    )


def effects_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


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
    tech_asks = os.environ.get("TETHER_WF_TECH_ASKS") == "1"
    if os.environ.get("TETHER_WF_CRASH"):
        wf = review_workflow(
            open_store(db),
            Path(effects),
            tech_asks=tech_asks,
            confirm=False,
            hang_on=os.environ.get("TETHER_WF_HANG") or None,
            execution=Execution(lease_ttl=1.0),
        )
    else:
        wf = review_workflow(open_store(db), Path(effects), tech_asks=tech_asks)
    try:
        result = wf.run("the plan") if mode == "start" else wf.resume(json.loads(rest[0]))
    except TetherError as exc:
        print(json.dumps({"error": type(exc).__name__, "message": str(exc)}), flush=True)
        return
    print(report(result), flush=True)


def step(
    db: str | Path, effects: Path, *args: str, tech_asks: bool = False, crash: bool = False
) -> dict[str, Any]:
    """Run one step of the review workflow in a fresh process; its JSON line."""
    env = {**os.environ, "TETHER_WF_TECH_ASKS": "1" if tech_asks else "0"}
    if crash:
        env["TETHER_WF_CRASH"] = "1"
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
