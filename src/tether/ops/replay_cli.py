"""``tether replay SESSION_ID --app module:factory``: re-run a recorded session with the agent
the factory builds (:mod:`tether.evals.replay`) and print what changed. The recorded session
is read read-only; the replay journals into a new session of the same store (or, with
``--dry``, into memory)."""

from __future__ import annotations

import asyncio
import inspect
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from tether.errors import TetherError
from tether.ops.cli_common import STORE
from tether.ops.eval_cli import usage
from tether.ops.store_url import describe, open_store
from tether.ops.terminal import json_text, safe
from tether.ops.worker_cli import load_factory

if TYPE_CHECKING:
    from tether.agent import Agent
    from tether.durable import Store
    from tether.evals.replay_diff import CallRow, ReplayDiff
    from tether.evals.replay_record import Recording
    from tether.models.base import Model
    from tether.ops.app_loader import AppFactory

HELP = """Re-run the recorded session SESSION_ID with the agent --app module:factory builds
(called with session_id= when it takes it): its user turns in order, one invocation each.
A tool call the recording ran (same tool, same arguments after the tool's coercion) is
answered with the recorded result and runs nothing; any other call gets a tool error and
runs nothing, unless --live-tools. Recorded interrupts get their recorded answers. Prints
the diff (tool calls added / removed / changed, verdicts changed, answers changed) and
writes it with --json PATH (- : stdout, no table). The recorded session is opened
read-only and never written; the replay runs in a new session of the same store (its id
is printed) or, with --dry, in memory. Exits 0 (converged, or diverged without --strict),
1 (diverged, with --strict; a replay that cannot run) or 2 (a usage error: an unknown
session or store, an --app or --model that cannot be loaded, an unwritable --json)."""

SESSION = typer.Argument(..., metavar="SESSION_ID", help="The recorded session.")
APP = typer.Option(..., "--app", help="module:factory; factory(session_id=...) -> Agent.")
MODEL = typer.Option(
    None, "--model", help="Replay with this model instead (a model string: openai:gpt-4.1, "
    "anthropic:..., scripted:turns.json, ...).",
)  # fmt: skip
LIVE = typer.Option(False, "--live-tools", help="Run the calls the recording has no result for.")
JSON_OUT = typer.Option(None, "--json", help="Write the diff here as JSON (- : stdout).")
STRICT = typer.Option(False, "--strict", help="Exit 1 when the replay diverged.")
DRY = typer.Option(False, "--dry", help="Replay in memory: nothing is written to the store.")
_SHOWN_MAX = 1000
_STYLE = {"added": "green", "removed": "red", "changed": "yellow", "same": "dim"}


def replay(
    session_id: str = SESSION,
    app_spec: str = APP,
    store: str = STORE,
    model: str | None = MODEL,
    live_tools: bool = LIVE,
    json_out: str | None = JSON_OUT,
    strict: bool = STRICT,
    dry: bool = DRY,
) -> None:
    from tether.durable import MemoryStore
    from tether.evals.replay import new_replay_id, replay_session
    from tether.evals.replay_record import read_recording

    factory = load_factory(app_spec)  # a bad spec exits 2 (typer.BadParameter)
    replacement = _model(model)
    if json_out not in (None, "-"):
        _writable(Path(json_out))

    async def read(url: str) -> Recording | None:
        opened = open_store(url, read_only=True)
        try:
            return await read_recording(opened, session_id)
        finally:
            await opened.close()

    try:
        recording = asyncio.run(read(store))
    except TetherError as exc:
        usage(str(exc))
    if recording is None:
        usage(f"no session {session_id!r} in {describe(store)}")
    if not any(turn.prompt for turn in recording.turns):
        usage(f"session {session_id!r} has no user turn to replay")
    sid = new_replay_id()
    agent = _agent(factory, app_spec, sid, replacement)

    async def work() -> ReplayDiff:
        target: Store = MemoryStore() if dry else open_store(store)
        try:
            return await replay_session(
                recording, agent, target, session_id=sid, live_tools=live_tools
            )
        finally:
            await target.close()

    try:
        diff = asyncio.run(work())
    except TetherError as exc:
        from tether.ops.cli_common import fail

        fail(f"the replay could not run: {exc}")
    text = json_text(json.dumps(diff.to_dict(), ensure_ascii=False, indent=2))
    if json_out == "-":
        Console(highlight=False, soft_wrap=True).out(text, highlight=False)
    else:
        console = Console(highlight=False, soft_wrap=True)
        where = "in memory (--dry: nothing kept)" if dry else f"in {describe(store)}"
        console.print(safe(f"replayed {session_id} as session {sid} {where}"))
        print_diff(console, diff)
        if json_out is not None:
            try:
                Path(json_out).write_text(text + "\n", encoding="utf-8")
            except OSError as exc:
                usage(f"cannot write the diff to {json_out!r}: {exc.strerror or exc}")
    raise typer.Exit(1 if strict and not diff.converged else 0)


def _writable(path: Path) -> None:
    """Exit 2 before anything runs when ``--json`` names a file that cannot be written."""
    import os

    parent = path.parent
    if path.is_dir() or not parent.is_dir() or not os.access(parent, os.W_OK):
        usage(f"cannot write the diff to {str(path)!r}: not a file in a writable directory")


def _model(spec: str | None) -> Model | None:
    if spec is None:
        return None
    from tether.errors import ConfigurationError
    from tether.models.registry import model_from_string

    try:
        return model_from_string(spec)
    except ConfigurationError as exc:
        usage(f"--model: {exc}")


def _agent(factory: AppFactory, spec: str, sid: str, model: Model | None) -> Agent:
    """The factory's agent for the replay session (the model replaced when given)."""
    try:
        parameters = inspect.signature(factory.factory).parameters.values()
        takes = any(
            p.name == "session_id" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters
        )
    except (TypeError, ValueError):
        takes = False
    try:
        agent = factory.build(sid if takes else None)
    except Exception as exc:  # the app's own code, or neither an Agent nor a workflow
        usage(f"cannot build the agent with {spec}: {type(exc).__name__}: {exc}")
    if model is not None:
        try:
            agent = agent.clone(model=model)
        except TetherError as exc:
            usage(f"--model: {exc}")
    return agent


def _args(arguments: dict[str, Any] | None) -> str:
    if arguments is None:
        return ""
    return json.dumps(arguments, ensure_ascii=False, sort_keys=True, default=str)


def _verdict(row: CallRow) -> Text:
    if row.then is None or row.now is None:
        return safe(row.then or row.now or "")
    if row.then == row.now:
        return safe(row.now, "dim")
    return safe(f"{row.then} -> {row.now}", "bold magenta")


def print_diff(console: Console, diff: ReplayDiff) -> None:
    """The diff as rich tables (every value escaped: it is recorded or model data)."""
    if diff.calls:
        table = Table(title="tool calls: then -> now", title_justify="left")
        for name in ("turn", "change", "tool", "then", "now", "verdict", "answered"):
            table.add_column(name)
        for row in diff.calls[:_SHOWN_MAX]:
            table.add_row(
                str(row.turn),
                Text(row.kind, style=_STYLE[row.kind]),
                safe(row.tool, one_line=True),
                safe(_args(row.then_arguments), one_line=True),
                safe(_args(row.now_arguments), one_line=True),
                _verdict(row),
                safe(row.answered or "-"),
            )
        console.print(table)
        if len(diff.calls) > _SHOWN_MAX:
            console.print(Text(f"{len(diff.calls) - _SHOWN_MAX} more calls: see --json"))
    changed = diff.answers_changed
    if changed:
        table = Table(title="answers that changed", title_justify="left")
        for name in ("turn", "prompt", "then", "now"):
            table.add_column(name)
        for answer in changed:
            table.add_row(
                str(answer.turn),
                safe(answer.prompt),
                safe(answer.then or "(none)"),
                safe(answer.now or "(none)"),
            )
        console.print(table)
    for note in diff.notes:
        console.print(safe(note, "yellow"))
    if diff.converged:
        console.print(
            Text(
                f"converged: the same {len(diff.calls)} tool calls, verdicts and answers",
                "green",
            )
        )
        return
    console.print(
        Text(
            f"diverged: {diff.count('added')} calls added, {diff.count('removed')} removed, "
            f"{diff.count('changed')} changed; {len(diff.verdicts_changed)} verdicts changed; "
            f"{len(changed)} answers changed",
            "red",
        )
    )
