"""A workflow graph in a child process that the workflow crash campaign kills with SIGKILL.

plan (a function) -> fan_a, fan_b, fan_c (agents fired together, each calling the
non-idempotent ``write``) -> join (a function, the fan-in: it waits for all three) ->
refine (a Loop of an agent, 2 rounds, each round calling ``write``) -> support (a Swarm:
triage hands off to billing, billing calls ``write``) -> end. ``write`` appends its line
to EFFECTS and fsyncs it before it returns. Every session (the graph's, each node's, the
loop's and swarm's agents') lives in one CrashStore (tests/support/crash_child.py): the
kill points (``commit``, ``ack`` per journal append of any session, ``effect`` per
write) are counted across the whole workflow, in order.

Usage: python workflow_crash_child.py DB SESSION EFFECTS MODE ANSWERS TARGET (as
crash_child.py). Stdout: ``DURABLE``, ``ACK``, ``COMMITTED``, ``AT``, ``RESULT`` (as
crash_child.py). ``python workflow_crash_child.py serve`` forks such children on request
(``serve``: spawning a fresh interpreter per run would spend most of the campaign
importing tether).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from crash_campaign import CHILD_TIMEOUT, Run, read_run
from crash_child import CrashStore, run_step

from tether import Agent, tool
from tether.models import ScriptedModel
from tether.workflows import Graph, Loop, StepContext, Swarm

PROMPT = "ship the release"
FANS = ("fan_a", "fan_b", "fan_c")
LINES = [*FANS, "loop-1", "loop-2", "swarm-billing"]
"""Every side effect of one full run, each once."""
FINAL = (
    "billing wrote swarm-billing for: user: looped2 <- looped1 <- joined "
    '["fan_a wrote fan_a", "fan_b wrote fan_b", "fan_c wrote fan_c"] | '
    "triage hands off: refund the release"
)


def writer(line: str) -> ScriptedModel:
    """Calls ``write(line)`` once, then answers ``<line> wrote <line>``."""

    def turn(messages: list[Any], specs: list[Any]) -> Any:
        if messages[-1].role == "tool":
            return f"{line} wrote {line}"
        return {"tool_calls": [{"id": "w1", "name": "write", "args": {"line": line}}]}

    return ScriptedModel(turn)


def polish_turn(messages: list[Any], specs: list[Any]) -> Any:
    """One loop round: ``write("loop-<round>")``, then ``looped<round> <- <task>``."""
    task = messages[0].text
    round_ = task.count("looped") + 1
    if messages[-1].role == "tool":
        return f"looped{round_} <- {task}"
    return {"tool_calls": [{"id": "w1", "name": "write", "args": {"line": f"loop-{round_}"}}]}


def triage_turn(messages: list[Any], specs: list[Any]) -> Any:
    args = {"agent": "billing", "message": "refund the release"}
    return {"tool_calls": [{"id": "h1", "name": "handoff", "args": args}]}


def billing_turn(messages: list[Any], specs: list[Any]) -> Any:
    if messages[-1].role == "tool":
        task = " | ".join(line for line in messages[0].text.splitlines() if line)
        return f"billing wrote swarm-billing for: {task}"
    return {"tool_calls": [{"id": "w1", "name": "write", "args": {"line": "swarm-billing"}}]}


def plan(step: StepContext) -> str:
    return f"plan for {step.input}"


def join(step: StepContext) -> str:
    outputs = json.loads(step.input)  # the fan-in's input: the three outputs, edge order
    return "joined " + json.dumps(outputs)


def build(db: str, session_id: str, effects: str, target: int) -> Agent:
    store = CrashStore(db, target)

    @tool
    async def write(line: str) -> str:
        """Append a line to the effects file (not idempotent)."""
        # blocking on purpose: the loop runs nothing else meanwhile (deterministic points)
        with open(effects, "a", encoding="utf-8") as f:  # noqa: ASYNC230
            f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())
        store.point("effect", line)
        return f"wrote {line}"

    assert not write.idempotent  # the campaign's point: a tool a crash must not repeat

    graph = Graph(max_steps=10, name="release", store=store, session_id=session_id)
    graph.add_node("plan", plan)
    for fan in FANS:
        graph.add_node(fan, Agent(writer(fan), tools=[write], name=fan))
    graph.add_node("join", join)
    polish = Agent(ScriptedModel(polish_turn), tools=[write], name="polish")
    graph.add_node("refine", Loop(polish, max_rounds=2, name="refine"))
    triage = Agent(ScriptedModel(triage_turn), name="triage")
    billing = Agent(ScriptedModel(billing_turn), tools=[write], name="billing")
    graph.add_node("support", Swarm([triage, billing], entry="triage", name="support"))
    for fan in FANS:
        graph.add_edge("plan", fan).add_edge(fan, "join")
    graph.add_edge("join", "refine").add_edge("refine", "support")
    graph.set_entry("plan")
    return graph.agent


def main() -> None:
    run_step(build, PROMPT, history=False)


def serve() -> None:
    """Run children by fork, their modules imported once: for each stdin line (a child's
    argv, JSON) print ``PID <pid>``, the child's stdout lines, then ``EXIT <code>``. Each
    child is a new process that built nothing before (this one only imports), reaped
    before its ``EXIT``; the campaign kills it by its pid."""
    _warm_up()
    for request in sys.stdin:
        assert threading.active_count() == 1  # fork copies no thread, so there must be none
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            _child(json.loads(request), write)
        os.close(write)
        sys.stdout.write(f"PID {pid}\n")
        sys.stdout.flush()
        with os.fdopen(read, encoding="utf-8") as lines:
            for line in lines:
                sys.stdout.write(line)
                sys.stdout.flush()
        _, status = os.waitpid(pid, 0)
        sys.stdout.write(f"EXIT {os.waitstatus_to_exitcode(status)}\n")
        sys.stdout.flush()


def _warm_up() -> None:
    """Import here what a run imports lazily (tether imports much inside functions), as
    a clean run in a forked child lists it, so each child starts at its first step."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(io.StringIO()):
                db, effects = os.path.join(tmp, "warm.db"), os.path.join(tmp, "effects")
                build(db, "warm", effects, 0).run(PROMPT)
            with os.fdopen(write, "wb") as out:
                out.write(json.dumps(sorted(sys.modules)).encode())
        except BaseException:
            traceback.print_exc()
            code = 1
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as names:
        imported = json.loads(names.read() or b"[]")
    os.waitpid(pid, 0)
    for name in imported:
        if name not in sys.modules:
            with contextlib.suppress(Exception):
                importlib.import_module(name)


def _child(argv: list[str], out: int) -> None:
    """In the forked child: stdout to the pipe, stderr to ``argv[-1]``, run main, exit."""
    code = 0
    try:
        os.dup2(out, 1)
        os.close(out)
        err = os.open(argv[-1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(err, 2)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        sys.argv = [__file__, *argv[:-1]]
        main()
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


class Forks:
    """The campaign's side of ``serve``: one serving process, one child at a time."""

    def __init__(self) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, __file__, "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def run(
        self, db: Path, session: str, effects: Path, mode: str, answers: Any, target: int
    ) -> Run:
        """One child run (as ``crash_campaign.run_child``), killed at its point by pid."""
        err = Path(f"{effects}.stderr")
        argv = [str(db), session, str(effects), mode]
        argv += ["-" if answers is None else json.dumps(answers), str(target), str(err)]
        stdin, stdout = self._proc.stdin, self._proc.stdout
        assert stdin is not None
        assert stdout is not None
        stdin.write(json.dumps(argv) + "\n")
        stdin.flush()
        head, _, pid_text = stdout.readline().partition(" ")
        assert head == "PID", f"serve answered {head!r}"
        pid = int(pid_text)
        code: list[int] = []

        def kill() -> None:
            if not code:  # (not yet reaped: the pid is still the child's)
                os.kill(pid, signal.SIGKILL)

        def lines() -> Iterator[str]:
            for line in stdout:
                if line.startswith("EXIT "):
                    code.append(int(line.split()[1]))
                    return
                yield line
            raise RuntimeError("serve ended")

        watchdog = threading.Timer(CHILD_TIMEOUT, kill)
        watchdog.start()
        try:
            run = read_run(lines(), kill)
        finally:
            watchdog.cancel()
        run.returncode = code[0]
        run.stderr = err.read_text(encoding="utf-8") if err.exists() else ""
        return run

    def close(self) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.close()
        self._proc.wait(timeout=30)


if __name__ == "__main__":
    serve() if sys.argv[1:] == ["serve"] else main()
