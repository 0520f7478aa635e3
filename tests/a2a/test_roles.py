"""The role ``invoke``: issued by ``tether approvers add``, it opens /a2a and nothing else."""

from __future__ import annotations

import asyncio
from pathlib import Path

from ops_cli import cli

from tether.durable import SQLiteStore
from tether.durable.approvers import Approver
from tether.ops.roles import role_problem
from tether.ops.server.auth import allowed


def test_approvers_add_issues_an_invoke_token(tmp_path: Path):
    db = str(tmp_path / "roles.db")
    added = cli("approvers", "add", "mesh", "--role", "invoke", "--store", db)
    assert added.exit_code == 0, added.output
    assert [a.roles for a in asyncio.run(SQLiteStore(db).approvers.all())] == [("invoke",)]
    assert role_problem("invoke") is None
    assert role_problem("Invoke") == "unknown role 'Invoke' (roles are case-sensitive and unpadded)"


def test_invoke_reaches_a2a_only():
    caller = Approver("mesh", ("invoke",), "k1", 0.0)
    assert allowed(caller, "invoke")
    assert not allowed(caller, "read")  # not the inbox
    assert not allowed(caller, "sessions")
    assert not allowed(caller, "audit")
    assert allowed(Approver("v", ("viewer",), "k2", 0.0), "invoke")  # readers read tasks
    assert not allowed(Approver("bot", ("deploy-bot",), "k3", 0.0), "invoke")
