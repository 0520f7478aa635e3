"""The ``tether`` command line."""

from __future__ import annotations

import typer

from tether.ops.approvals_cli import app as approvals_app
from tether.ops.approvals_cli import approvers_app
from tether.ops.audit_cli import app as audit_app
from tether.ops.sessions import app as sessions_app

app = typer.Typer(
    name="tether",
    help="tether: run tool-using LLM agents you stay in control of.",
    no_args_is_help=True,
    add_completion=False,
)
app.add_typer(sessions_app, name="sessions")
app.add_typer(approvals_app, name="approvals")
app.add_typer(approvers_app, name="approvers")
app.add_typer(audit_app, name="audit")


@app.callback()
def _root() -> None:
    """tether: run tool-using LLM agents you stay in control of."""


@app.command()
def demo(
    approve: bool = typer.Option(False, "--approve", help="Approve every confirmation."),
    deny: bool = typer.Option(False, "--deny", help="Deny every confirmation."),
) -> None:
    """Run an operations agent on a scripted model, with a delete policy that asks you first."""
    if approve and deny:
        raise typer.BadParameter("choose one of --approve and --deny")
    from tether.ops.demo import run_demo

    outcome = run_demo(approve=approve, deny=deny)
    raise typer.Exit(code=0 if outcome.stop_reason == "end_turn" else 1)


def main() -> None:
    """Console-script entry point."""
    app()
