"""``tether approvers``: add, list and remove the approvers of a store and their bearer
tokens (only a token's hash is stored)."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.table import Table

from tether.ops.cli_common import STORE, command_group, fail, when, with_store
from tether.ops.roles import VALID_ROLES, role_problem
from tether.ops.store_url import describe
from tether.ops.terminal import safe

approvers_app = command_group(
    "approvers", "Manage approvers and their bearer tokens (stored hashed)."
)
ROLE = typer.Option(
    ...,
    "--role",
    "-r",
    help="A role (repeat for several): approve:PATTERN, viewer, auditor or admin.",
)


@approvers_app.command("add")
def add_approver(
    name: str = typer.Argument(..., help="The approver's name (recorded with decisions)."),
    role: list[str] = ROLE,
    store: str = STORE,
    custom_role: bool = typer.Option(
        False,
        "--custom-role",
        help="Accept roles the default policy does not know (for create_app(policy=...)).",
    ),
) -> None:
    """Add an approver and print their bearer token ONCE (only its hash is stored).

    Creates the store when it does not exist yet.
    """
    problems = [] if custom_role else [p for p in map(role_problem, role) if p is not None]
    if problems:
        raise typer.BadParameter(
            "; ".join(problems) + f". Valid roles: {VALID_ROLES} (or pass --custom-role)",
            param_hint="'--role'",
        )
    try:
        issued = with_store(store, lambda s: s.approvers.add(name, role), create=True)
    except ValueError as exc:
        fail(str(exc))
    console = Console(highlight=False)
    console.print(safe(f"approver {name!r} added with role(s) {', '.join(issued.approver.roles)}"))
    console.print("bearer token (shown once, not stored; keep it secret):", markup=False)
    typer.echo(issued.token)


@approvers_app.command("list")
def list_approvers(store: str = STORE) -> None:
    """List approvers (names, roles, key ids; never tokens)."""
    rows = with_store(store, lambda s: s.approvers.all(), read_only=True)
    table = Table(title=safe(f"approvers in {describe(store)}"), title_justify="left")
    for column in ("name", "roles", "key id", "added"):
        table.add_column(column)
    for a in rows:
        table.add_row(safe(a.name), safe(", ".join(a.roles)), safe(a.key_id), when(a.created_at))
    Console(highlight=False).print(table)


@approvers_app.command("remove")
def remove_approver(name: str = typer.Argument(...), store: str = STORE) -> None:
    """Remove an approver: their token stops working at once."""
    if not with_store(store, lambda s: s.approvers.remove(name)):
        fail(f"no approver named {name!r} in {describe(store)}")
    Console(highlight=False).print(safe(f"removed approver {name!r}"))
