"""``tether policy check --app``: the table and ``--json`` over a recorded store, exit codes,
bad input, escaping, and a store left byte for byte as it was."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import policy_store as ps
import pytest
from ops_cli import cli

from tether import Agent
from tether.durable import SQLiteStore
from tether.models import ScriptedModel

APP = "policy_app:make_agent"
NASTY = "/etc/\x1b[2Jx\u202egnp.conf"
"""A recorded path (the model's) with a terminal escape and a bidi override."""


def fingerprint(path: Path) -> tuple[bytes, int, list[str]]:
    return path.read_bytes(), path.stat().st_mtime_ns, sorted(p.name for p in path.parent.iterdir())


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """43 recorded sessions and one whose delete names NASTY, copied read-only."""
    live = tmp_path_factory.mktemp("live") / "traffic.db"
    store = SQLiteStore(live)
    for index in range(43):
        ps.record(store, index)
    call = {"id": "dx", "name": "delete_file", "args": {"path": NASTY}}
    Agent(
        model=ScriptedModel([{"tool_calls": [call]}, "done"]),
        tools=ps.TOOLS,
        store=store,
        session_id="nasty",
    )("clean up")
    import asyncio

    asyncio.run(store.close())
    frozen = tmp_path_factory.mktemp("copy") / "traffic.db"
    shutil.copy(live, frozen)
    frozen.chmod(0o444)
    return frozen


def test_json_lists_the_calls_the_new_rule_denies(recorded: Path) -> None:
    before = fingerprint(recorded)
    out = cli("policy", "check", "--app", APP, "--store", str(recorded), "--json")
    assert out.exit_code == 0, out.output
    [line] = out.stdout.splitlines()
    report = json.loads(line)
    assert set(report) == {
        "sessions",
        "calls",
        "changed",
        "then",
        "now",
        "tools",
        "rows",
        "rows_left_off",
        "failures",
        "seconds",
    }
    assert report["sessions"] == 44
    assert report["calls"] == len(ps.expected_calls(43)) + 1
    assert {(r["session_id"], r["call_id"]) for r in report["rows"]} == {
        ("s-0000", "d0"),
        ("s-0021", "d21"),
        ("s-0042", "d42"),
        ("nasty", "dx"),
    }
    row = next(r for r in report["rows"] if r["call_id"] == "d21")
    assert set(row) == {
        "session_id",
        "call_id",
        "tool",
        "at",
        "then",
        "status",
        "now",
        "changed",
        "reason",
        "arguments",
        "rewritten",
        "policies",
    }
    assert (row["then"], row["status"], row["now"], row["changed"]) == (
        "proceed",
        "ok",
        "deny",
        True,
    )
    assert report["tools"]["delete_file"] == {
        "calls": 8,
        "then": {"proceed": 8},
        "now": {"proceed": 4, "deny": 4},
        "changed": 4,
    }
    assert "\x1b" not in out.stdout
    assert "\u202e" not in out.stdout
    nasty = next(r for r in report["rows"] if r["call_id"] == "dx")
    assert nasty["arguments"] == {"path": NASTY}  # escaped on the terminal, same value parsed
    assert fingerprint(recorded) == before  # read-only: bytes, mtime, no -wal/-shm


def test_the_table_names_each_call_and_escapes_what_the_model_wrote(recorded: Path) -> None:
    out = cli("policy", "check", "--app", APP, "--store", str(recorded), "--session", "s-002*")
    assert out.exit_code == 0, out.output
    assert "s-0021" in out.stdout
    assert "d21" in out.stdout
    assert "denied by policy 'NoEtc': /etc/21.conf is under /etc/" in out.stdout
    assert "s-0000" not in out.stdout
    assert "14 calls in 10 sessions" in out.stdout  # 10 reads, d21, d28, p20, p25
    everything = cli("policy", "check", "--app", APP, "--store", str(recorded))
    assert "\x1b" not in everything.stdout
    assert "\u202e" not in everything.stdout
    assert "\\x1b[2Jx\\u202egnp.conf" in everything.stdout


def test_bad_input_is_a_usage_error_naming_it(recorded: Path) -> None:
    before = fingerprint(recorded)
    since = cli("policy", "check", "--app", APP, "--store", str(recorded), "--since", "yesterday")
    assert since.exit_code == 2
    assert "'yesterday' is not an ISO date or time" in since.output
    app = cli("policy", "check", "--app", "nowhere_module:f", "--store", str(recorded))
    assert app.exit_code == 2
    assert "cannot import 'nowhere_module'" in app.output
    wrong = cli("policy", "check", "--app", "policy_app:not_an_agent", "--store", str(recorded))
    assert wrong.exit_code == 1
    assert "policy_app:not_an_agent returned dict, not an Agent" in wrong.output
    broken = cli("policy", "check", "--app", "policy_app:broken", "--store", str(recorded))
    assert broken.exit_code == 1
    assert "cannot build the agent with policy_app:broken: RuntimeError: no configuration" in (
        broken.output
    )
    assert "\x1b" not in broken.output
    missing = cli("policy", "check", "--app", APP, "--store", str(recorded.parent / "none.db"))
    assert missing.exit_code == 1
    assert "error:" in missing.output
    assert not (recorded.parent / "none.db").exists()
    assert fingerprint(recorded) == before


def test_since_in_the_future_checks_nothing(recorded: Path) -> None:
    out = cli(
        "policy", "check", "--app", APP, "--store", str(recorded), "--since", "2999-01-01", "--json"
    )
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert (report["sessions"], report["calls"], report["rows"]) == (0, 0, [])
