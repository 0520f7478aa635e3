"""The ``tether`` command line."""

from __future__ import annotations

from pathlib import Path

import typer

from tether.ops.approvals_cli import app as approvals_app
from tether.ops.approvals_cli import approvers_app
from tether.ops.audit_cli import app as audit_app
from tether.ops.eval_cli import app as eval_app
from tether.ops.mcp_cli import app as mcp_app
from tether.ops.memory_cli import app as memory_app
from tether.ops.policy_cli import app as policy_app
from tether.ops.replay_cli import HELP as REPLAY_HELP
from tether.ops.replay_cli import replay
from tether.ops.sessions import STORE, _fail
from tether.ops.sessions import app as sessions_app
from tether.ops.temporal_cli import app as temporal_app
from tether.ops.worker_cli import load_factory, worker

DEMO_DIR = typer.Option(
    Path("tether-demo"),
    "--dir",
    help="Folder for the demo's workspace and store, kept for the printed commands "
    "(reset by the next run).",
)

app = typer.Typer(
    name="tether",
    help="tether: run tool-using LLM agents you stay in control of.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,  # help texts are plain: "[server]" is not markup
)
app.add_typer(sessions_app, name="sessions")
app.add_typer(approvals_app, name="approvals")
app.add_typer(approvers_app, name="approvers")
app.add_typer(audit_app, name="audit")
app.add_typer(mcp_app, name="mcp")
app.add_typer(policy_app, name="policy")
app.add_typer(eval_app, name="eval")
app.add_typer(memory_app, name="memory")
app.add_typer(temporal_app, name="temporal")
app.command()(worker)
app.command("replay", help=REPLAY_HELP)(replay)


@app.callback()
def _root() -> None:
    """tether: run tool-using LLM agents you stay in control of."""


@app.command()
def demo(
    approve: bool = typer.Option(False, "--approve", help="Approve every confirmation."),
    deny: bool = typer.Option(
        False, "--deny", help="Deny every confirmation (the default without a terminal)."
    ),
    directory: Path = DEMO_DIR,
) -> None:
    """Run an operations agent on a scripted model, with a delete policy that asks you first."""
    if approve and deny:
        raise typer.BadParameter("choose one of --approve and --deny")
    from tether.errors import ConfigurationError
    from tether.ops.demo import run_demo

    try:
        outcome = run_demo(approve=approve, deny=deny, directory=directory)
    except ConfigurationError as exc:
        _fail(str(exc))
    raise typer.Exit(code=0 if outcome.stop_reason == "end_turn" else 1)


@app.command()
def serve(
    store: str = STORE,
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to listen on."),
    port: int = typer.Option(8700, "--port", min=1, max=65535, help="TCP port."),
    app_spec: str | None = typer.Option(
        None,
        "--app",
        help="module:factory building a session's Agent (validates edited arguments; "
        "served over A2A at /a2a).",
    ),
    public_url: str | None = typer.Option(
        None, "--public-url", help="Base URL the A2A agent card names (default: the request's)."
    ),
    a2a_skills: str | None = typer.Option(
        None,
        "--a2a-skills",
        help="JSON file: the A2A card's skills ([{id, name, description, tags, examples}]; "
        "default: one per tool).",
    ),
) -> None:
    """Serve the approvals inbox (web page at /) and its HTTP API (needs the server extra:
    pip install -e '.[server]' in a checkout). Creates the store when it does not exist.
    Keeps serving when its stdout or stderr reader goes away."""
    from tether.ops.safe_io import protect_stdio

    protect_stdio()
    try:
        from tether.ops.server import serve as run_server
    except ImportError as exc:
        _fail(
            f"tether serve needs the server extra (Starlette, uvicorn): pip install -e "
            f"'.[server]' in the tether checkout ({exc})"
        )
    if app_spec is not None:
        load_factory(app_spec)  # a bad --app is a usage error before anything starts
    if a2a_skills is not None:
        from tether.a2a.skills import load_skills
        from tether.errors import ConfigurationError

        try:
            load_skills(a2a_skills)  # a bad file is a usage error before anything starts
        except ConfigurationError as exc:
            _fail(str(exc))
    from tether.errors import TetherError

    try:
        run_server(
            store,
            host=host,
            port=port,
            app_spec=app_spec,
            public_url=public_url,
            a2a_skills=a2a_skills,
        )
    except TetherError as exc:
        _fail(str(exc))


def main() -> None:
    """Console-script entry point."""
    app()
