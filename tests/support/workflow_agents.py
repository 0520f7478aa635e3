"""Scripted agents and a review workflow for the workflow tests (also run as a child process).

The review workflow: ``draft`` (a function, counts its runs in EFFECTS) -> ``review``, a
Parallel of ``legal`` and ``tech`` (agents each calling a non-idempotent ``write`` that
the workflow's policy confirms; ``tech`` only when TETHER_WF_TECH_ASKS=1) ->
``summary`` (an agent). Its session lives in the store DB under ``wf-1``.

Usage: python workflow_agents.py DB EFFECTS start | resume ANSWERS_JSON
Prints one JSON line: stop_reason, text, interrupts (id, name, point, source), or the error.
With TETHER_WF_CRASH=1 the workflow runs without the Confirm and with 1 s leases, and the
``write`` of TETHER_WF_HANG hangs after its side effect (the test SIGKILLs it there).
With TETHER_WF_SCENARIO=NAME it resumes SCENARIOS[NAME] instead (``resume_elsewhere``;
the ``backend`` fixture of tests/workflows/conftest.py) and prints its ``outcome``.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from tether import Agent, Execution, TetherError, tool
from tether.control import BeforeToolCall, Confirm, InterventionHandler
from tether.durable import MemoryStore, PostgresStore, SQLiteStore, Store
from tether.models import ScriptedModel
from tether.workflows import Graph, Loop, Parallel, Sequential, StepContext, Update, Workflow


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
    scenario = os.environ.get("TETHER_WF_SCENARIO")
    if scenario:  # a second process resuming one of SCENARIOS
        built = SCENARIOS[scenario](open_store(db), Path(effects))
        print(json.dumps(asyncio.run(resume_here(built, json.loads(rest[0])))), flush=True)
        return
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


# -- scenarios: built alike in the test and in a second process that resumes them ----------


def write_tool(effects: Path) -> Any:
    """A non-idempotent ``write`` appending its text to EFFECTS."""

    @tool
    def write(text: str) -> str:
        """Write text (a side effect that must happen once)."""
        with effects.open("a", encoding="utf-8") as f:
            f.write(f"{text}\n")
        return f"ok {text}"

    return write


def deep_workflow(store: Store | None, effects: Path) -> Sequential:
    """Sequential > Parallel > Sequential > agent: ``legal`` asks three workflows deep."""
    legal = Agent(writer("legal"), tools=[write_tool(effects)], name="legal")
    outer = Parallel(Sequential(legal, name="middle"), lambda step: "side", name="outer")
    return Sequential(
        outer, store=store, session_id="deep-1", interventions=[ConfirmWrites()], name="deep"
    )


def loop_workflow(store: Store | None, effects: Path) -> Loop:
    """Three rounds of ``w``, each writing its input under the Confirm, answering ``input+``."""

    def turn(messages: list[Any], specs: list[Any]) -> Any:
        if messages[-1].role == "tool":
            return messages[0].text + "+"
        text = messages[0].text
        return {"tool_calls": [{"id": "w", "name": "write", "args": {"text": text}}]}

    agent = Agent(ScriptedModel(turn), tools=[write_tool(effects)], name="w")
    return Loop(
        agent, max_rounds=3, store=store, session_id="loop-1", interventions=[ConfirmWrites()]
    )


def graph_workflow(store: Store | None, effects: Path) -> Graph:
    """plan -> legal (asks), tech at once -> merge (a fan-in)."""
    g = Graph(store=store, session_id="g-1", interventions=[ConfirmWrites()], name="g")
    g.add_node("plan", Agent(echo("plan"), name="plan"))
    g.add_node("legal", Agent(writer("legal"), tools=[write_tool(effects)], name="legal"))
    g.add_node("tech", Agent(echo("tech"), name="tech"))
    g.add_node("merge", lambda ctx: "merged " + ctx.input)
    g.add_edge("plan", "legal")
    g.add_edge("plan", "tech")
    g.add_edge("legal", "merge")
    g.add_edge("tech", "merge")
    g.set_entry("plan")
    return g


class Tally(BaseModel):
    """The typed state of the ``typed_state`` scenario."""

    count: int = 0
    log: list[str] = []


def state_workflow(store: Store | None, effects: Path, *, typed: bool = False) -> Sequential:
    """first (count + 1, log first) -> Parallel(note (log note), w asking) -> last, which
    reads the state (a dict, or a :class:`Tally` when ``typed``); ``log`` appends (a
    reducer), ``count`` is last-write."""

    def read(state: Any, key: str) -> Any:
        return getattr(state, key) if typed else state[key]

    def first(ctx: StepContext) -> dict[str, Any]:
        return {"count": read(ctx.state, "count") + 1, "log": ["first"]}

    def note(ctx: StepContext) -> Update:
        return Update("noted", {"log": ["note"]})

    def last(ctx: StepContext) -> str:
        count, log = read(ctx.state, "count"), ",".join(read(ctx.state, "log"))
        return f"count={count} log={log} in={ctx.input}"

    w = Agent(writer("w"), tools=[write_tool(effects)], name="w")
    return Sequential(
        first,
        ("both", Parallel(note, w)),
        last,
        state=Tally() if typed else {"count": 0, "log": []},
        reducers={"log": "append"},
        store=store,
        session_id="state-2",
        interventions=[ConfirmWrites()],
    )


def no_secrets(ctx: dict[str, Any]) -> dict[str, Any]:
    """An AGENT-HOOKS interceptor: ``read_secret`` is denied wherever it is called."""
    call = ctx.get("tool_call") or {}
    if ctx["interception_point"] == "pre_tool_call" and call.get("name") == "read_secret":
        return {"decision": "deny", "reason": "policy:no-secrets"}
    return {"decision": "allow"}


def governed_workflow(store: Store | None, effects: Path) -> Sequential:
    """``guarded`` three workflows deep (Sequential > Parallel > Sequential > agent) writes
    under the Confirm, then reads a secret the workflow's AGENT-HOOKS host denies; the
    workflow files approvals with its own redactor (the text hidden)."""
    from tether.control import ApprovalPolicy
    from tether.control.agent_hooks import AgentHooksHost

    @tool
    def read_secret() -> str:
        """Read the secret."""
        with effects.open("a", encoding="utf-8") as f:
            f.write("secret\n")
        return "s3cr3t"

    def turn(messages: list[Any], specs: list[Any]) -> Any:
        tools = [m for m in messages if m.role == "tool"]
        if not tools:
            return {"tool_calls": [{"id": "w", "name": "write", "args": {"text": "guarded"}}]}
        if len(tools) == 1:
            return {"tool_calls": [{"id": "s", "name": "read_secret", "args": {}}]}
        return " / ".join(m.tool_results[0].content for m in tools)

    guarded = Agent(ScriptedModel(turn), tools=[write_tool(effects), read_secret], name="guarded")
    mid = Parallel(Sequential(guarded, name="inner"), lambda step: "side", name="mid")
    return Sequential(
        mid,
        store=store,
        session_id="gov-1",
        interventions=[ConfirmWrites()],
        agent_hooks=AgentHooksHost([no_secrets]),
        approvals=ApprovalPolicy(redactor=lambda tool, args: {**args, "text": "<hidden>"}),
        name="governed",
    )


def caller_agent(store: Store | None, effects: Path) -> Agent:
    """An agent (its own session ``caller-1``) calling the review workflow as a tool."""

    def turn(messages: list[Any], specs: list[Any]) -> Any:
        if messages[-1].role == "tool":
            return "caller: " + messages[-1].tool_results[0].content
        return {"tool_calls": [{"id": "p1", "name": "pipeline", "args": {"task": "the plan"}}]}

    pipeline = review_workflow(None, effects).as_tool("pipeline", "Drafts, reviews, sums up")
    return Agent(
        ScriptedModel(turn), tools=[pipeline], store=store, session_id="caller-1", name="caller"
    )


SCENARIOS: dict[str, Any] = {
    "review": lambda store, effects: review_workflow(store, effects, tech_asks=True),
    "deep": deep_workflow,
    "loop": loop_workflow,
    "graph": graph_workflow,
    "state": state_workflow,
    "typed_state": lambda store, effects: state_workflow(store, effects, typed=True),
    "governed": governed_workflow,
    "as_tool": caller_agent,
    "bounded_swarm": lambda store, effects: _swarm_agents().bounded_swarm(store, effects),
}
"""Workflow factories (store, effects path) a test builds and a second process resumes."""


def _swarm_agents() -> Any:
    import swarm_agents  # (it imports this module)

    return swarm_agents


def outcome(wf: Workflow | Agent, result: Any) -> dict[str, Any]:
    """A Result as the JSON a second process prints: its stop, text, interrupts, the
    workflow's state and the node paths its usage counts."""
    return {
        **json.loads(report(result)),
        "reason": result.reason,
        "reasons": [i.reason for i in result.interrupts],
        "state": wf.state,
        "by_agent": sorted(result.usage.by_agent),
    }


async def resume_here(wf: Workflow | Agent, answers: dict[str, Any]) -> dict[str, Any]:
    """Resume ``wf`` with ``answers``: its :func:`outcome`, or the TetherError raised."""
    try:
        result = await wf.resume_async(answers)
    except TetherError as exc:
        return {"error": type(exc).__name__, "message": str(exc)}
    return outcome(wf, result)


def resume_elsewhere(scenario: str, db: str | Path, effects: Path, answers: dict[str, Any]) -> Any:
    """Resume SCENARIOS[scenario] on DB with ``answers`` in a fresh process; its outcome."""
    env = {**os.environ, "TETHER_WF_SCENARIO": scenario}
    done = subprocess.run(
        [sys.executable, __file__, str(db), str(effects), "resume", json.dumps(answers)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@dataclass
class Backend:
    """One database of a workflow test; :meth:`store` is a new store object on it (as a
    new process's). :meth:`resume` resumes a scenario in a second process on SQLite and
    PostgreSQL; a MemoryStore lives and dies with its process, so there it is a fresh
    workflow built by the same factory on a sibling store object: what a second process
    does, minus the process."""

    name: str
    db: str | None
    """The SQLite path or PostgreSQL conninfo a second process opens (None: memory)."""
    effects: Path
    made: list[Store] = field(default_factory=list)
    memory: MemoryStore | None = None

    def store(self) -> Store:
        store: Store
        if self.db is not None:
            store = open_store(self.db)
        elif self.memory is None:
            store = self.memory = MemoryStore()
        else:
            store = self.memory.sibling()
        self.made.append(store)
        return store

    def build(self, scenario: str) -> Any:
        """SCENARIOS[scenario] on a new store object, as the test's first process."""
        return SCENARIOS[scenario](self.store(), self.effects)

    async def resume(self, scenario: str, answers: dict[str, Any]) -> dict[str, Any]:
        """Resume the scenario's session with ``answers`` elsewhere: its outcome (JSON)."""
        if self.db is None:
            return await resume_here(self.build(scenario), answers)
        out: dict[str, Any] = await asyncio.to_thread(
            resume_elsewhere, scenario, self.db, self.effects, answers
        )
        return out


if __name__ == "__main__":
    main()
