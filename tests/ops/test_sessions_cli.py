"""``tether sessions list|show|export`` on sessions written by real agent runs."""

import asyncio
import json
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import pytest
from typer.testing import CliRunner

from tether import Agent, ToolContext, tool
from tether.durable import PostgresStore, SQLiteStore, StoreUnavailable
from tether.models import ScriptedModel
from tether.models.scripted import Turn
from tether.ops.cli import app
from tether.ops.store_url import describe, open_store, sqlite_path

TETHER = str(Path(sys.executable).with_name("tether"))
ENV: dict[str, str | None] = {"COLUMNS": "200", "NO_COLOR": "1", "TETHER_STORE": None}
LONG = "x" * 900


@tool
def add(a: int, b: int) -> int:
    """Add."""
    return a + b


@tool
def fail(why: str) -> str:
    """Always fails."""
    raise ValueError(f"boom {why}")


@tool
def delete(path: str, ctx: ToolContext) -> str:
    """Delete a file after a human approves."""
    return f"deleted {path}: {ctx.interrupt('approve_delete', f'delete {path}?')}"


def calls(*specs: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "args": args} for name, args in specs]}


def write_sessions(store: Any) -> None:
    """Three sessions, oldest first: done (reasoning), batch (3 calls, one fails), susp."""
    done: list[Turn] = [
        {"reasoning": "I should add.", **calls(("add", {"a": 2, "b": 3}))},
        "The sum is 5.",
    ]
    batch: list[Turn] = [
        calls(("add", {"a": 1, "b": 1}), ("fail", {"why": "y"}), ("add", {"a": 5, "b": 5}))
    ]
    batch.append({"text": "done " + LONG})
    susp: list[Turn] = [calls(("add", {"a": 1, "b": 2}), ("delete", {"path": "/tmp/x"})), "ok"]
    prompts = {"done": "what is 2+3? [bold]x[/bold]", "batch": "batch please", "susp": "clean up"}
    for sid, script in (("done", done), ("batch", batch), ("susp", susp)):
        agent = Agent(
            model=ScriptedModel(script),
            tools=[add, fail, delete],
            store=store,
            session_id=sid,
        )
        agent(prompts[sid])


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sessions") / "s.db"
    store = SQLiteStore(path)
    write_sessions(store)
    asyncio.run(store.close())  # checkpoints the WAL, so copying the file copies every table
    return path


def cli(*args: str) -> Any:
    result = CliRunner(env=ENV).invoke(app, ["sessions", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    return result


def session_ids(table: str) -> list[str]:
    """The first column of a rendered rich table's body rows."""
    return [line.split("│")[1].strip() for line in table.splitlines() if line.startswith("│")]


def rows(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


# -- list ---------------------------------------------------------------------------


def test_list_shows_newest_first_with_status_and_entries(db: Path) -> None:
    out = cli("list", "--store", str(db))
    assert out.exit_code == 0, out.output
    assert session_ids(out.stdout) == ["susp", "batch", "done"]
    lines = [line for line in out.stdout.splitlines() if line.startswith("│")]
    assert [line.split("│")[2].strip() for line in lines] == ["suspended", "completed", "completed"]
    assert all(int(line.split("│")[3]) > 0 for line in lines)
    assert f"sessions in {db}" in out.stdout
    assert re.search(r"\d\d:\d\d:\d\d \((just now|\d+[smhd] ago)\)", out.stdout)


def test_list_filters_by_status_and_limits(db: Path) -> None:
    out = cli("list", "--store", str(db), "--status", "suspended")
    assert "susp" in out.stdout
    assert "batch" not in out.stdout
    out = cli("list", "--store", str(db), "--limit", "1")
    assert "susp" in out.stdout
    assert "done" not in out.stdout
    assert "showing the newest 1; pass --limit N for more" in out.stdout
    out = cli("list", "--store", str(db), "--status", "failed")
    assert out.exit_code == 0
    assert out.stdout.strip() == f"no failed sessions in {db}"
    bad = cli("list", "--store", str(db), "--status", "asleep")
    assert bad.exit_code == 2
    assert "unknown status 'asleep'; choose one of cancelled, completed" in bad.stderr


def test_the_default_store_is_tether_db_in_the_working_directory(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for suffix in ("", "-wal", "-shm"):  # a WAL database is the file and its log
        if Path(f"{db}{suffix}").exists():
            shutil.copy(f"{db}{suffix}", tmp_path / f"tether.db{suffix}")
    monkeypatch.chdir(tmp_path)
    out = cli("list")
    assert out.exit_code == 0, out.output
    assert "sessions in ./tether.db" in out.stdout
    assert "susp" in out.stdout


def test_list_as_the_installed_console_script(db: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "TETHER_STORE"}
    run = subprocess.run(
        [TETHER, "sessions", "list", "--store", str(db)],
        capture_output=True,
        text=True,
        env={**env, "COLUMNS": "200", "NO_COLOR": "1"},
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert "susp" in run.stdout
    assert "suspended" in run.stdout
    assert "done" in run.stdout
    missing = subprocess.run(
        [TETHER, "sessions", "list", "--store", str(db.parent / "nope.db")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert missing.returncode == 1
    assert "no tether store at" in missing.stderr
    assert "Traceback" not in missing.stderr


# -- show ---------------------------------------------------------------------------


def test_show_a_suspended_session_lists_its_interrupt_and_the_open_batch(db: Path) -> None:
    out = cli("show", "susp", "--store", str(db))
    assert out.exit_code == 0, out.output
    text = out.stdout
    assert "status   suspended" in text
    assert "pending interrupts" in text
    assert "approve_delete" in text
    assert "delete /tmp/x?" in text
    assert 'delete({"path": "/tmp/x"})' in text
    assert "call_1_1" in text
    assert "transcript (2 messages)" in text
    assert "open tool batch (results so far)" in text
    assert "← add [ok]  call_1_0: 3" in text  # the finished sibling
    assert "delete  call_1_1: waiting for interrupt int_" in text
    assert f"answer them with: tether approvals list --session susp --store {db}" in text
    assert "resume(" not in text  # an operator is pointed to the CLI, not to Python


def test_show_renders_tool_calls_results_and_truncates_long_text(db: Path) -> None:
    out = cli("show", "batch", "--store", str(db))
    assert out.exit_code == 0, out.output
    text = out.stdout
    assert "status   completed" in text
    assert "pending interrupts" not in text
    assert '→ add({"a": 1, "b": 1})  call_1_0' in text
    assert '→ fail({"why": "y"})  call_1_1' in text
    assert "← fail [error]  call_1_1: Error: ValueError: boom y" in text
    assert "← add [ok]  call_1_2: 10" in text
    assert "[405 more characters; --full shows all]" in text
    assert LONG not in text.replace("\n", "").replace(" ", "")
    full = cli("show", "batch", "--store", str(db), "--full")
    assert "more characters" not in full.stdout
    assert full.stdout.count("x") >= len(LONG)


def test_show_prints_reasoning_and_content_literally(db: Path) -> None:
    out = cli("show", "done", "--store", str(db))
    assert "reasoning: I should add." in out.stdout
    assert "what is 2+3? [bold]x[/bold]" in out.stdout  # user text is never rich markup
    assert "The sum is 5." in out.stdout


# -- export -------------------------------------------------------------------------


def test_export_jsonl_is_an_openai_style_trajectory(db: Path) -> None:
    out = cli("export", "done", "--format", "jsonl", "--store", str(db))
    assert out.exit_code == 0, out.output
    function = {"name": "add", "arguments": '{"a": 2, "b": 3}'}
    call = {"id": "call_1_0", "type": "function", "function": function}
    assert rows(out.stdout) == [
        {"role": "user", "content": "what is 2+3? [bold]x[/bold]"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1_0", "content": "5"},
        {"role": "assistant", "content": "The sum is 5."},
    ]
    with_reasoning = cli("export", "done", "--store", str(db), "--include-reasoning")
    assert rows(with_reasoning.stdout)[1]["reasoning"] == "I should add."
    system = cli("export", "done", "--store", str(db), "--system", "You add numbers.")
    assert rows(system.stdout)[0] == {"role": "system", "content": "You add numbers."}


def test_export_splits_a_batch_into_one_tool_message_per_result(db: Path, tmp_path: Path) -> None:
    target = tmp_path / "batch.jsonl"
    out = cli("export", "batch", "--store", str(db), "--output", str(target))
    assert out.exit_code == 0, out.output
    assert out.stdout == ""
    assert f"wrote 6 messages of session 'batch' to {target}" in out.stderr
    messages = rows(target.read_text(encoding="utf-8"))
    assert [m["role"] for m in messages] == [
        "user",
        "assistant",
        "tool",
        "tool",
        "tool",
        "assistant",
    ]
    ids = [c["id"] for c in messages[1]["tool_calls"]]
    assert ids == ["call_1_0", "call_1_1", "call_1_2"]
    assert [(m["tool_call_id"], m["content"]) for m in messages[2:5]] == [
        ("call_1_0", "2"),
        ("call_1_1", "Error: ValueError: boom y"),
        ("call_1_2", "10"),
    ]
    assert messages[5] == {"role": "assistant", "content": "done " + LONG}
    as_json = cli("export", "batch", "--store", str(db), "--format", "json")
    assert json.loads(as_json.stdout) == messages


def test_export_of_a_suspended_session_warns_about_the_open_batch(db: Path) -> None:
    out = cli("export", "susp", "--store", str(db))
    assert out.exit_code == 0
    messages = rows(out.stdout)
    assert [c["function"]["name"] for c in messages[-1]["tool_calls"]] == ["add", "delete"]
    assert "stopped inside a tool batch" in out.stderr


def test_export_refuses_an_unknown_format(db: Path) -> None:
    out = cli("export", "done", "--store", str(db), "--format", "csv")
    assert out.exit_code == 2
    assert "unknown format 'csv'; supported: jsonl, json" in out.stderr


# -- errors -------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["show", "export"])
def test_an_unknown_session_says_so_and_how_to_list(db: Path, command: str) -> None:
    out = cli(command, "nope", "--store", str(db))
    assert out.exit_code == 1
    assert f"no session 'nope' in {db}" in out.stderr
    assert f"tether sessions list --store {db}" in out.stderr
    assert out.stdout == ""


def test_a_missing_store_file_is_an_error_and_is_not_created(tmp_path: Path) -> None:
    path = tmp_path / "missing.db"
    for args in (["list"], ["show", "x"], ["export", "x"]):
        out = cli(*args, "--store", str(path))
        assert out.exit_code == 1
        assert (
            f"no tether store at {path} (run an agent with a session id first, or pass --store)"
            in out.stderr
        )
    assert not path.exists()


def test_a_corrupt_entry_is_the_stores_error_without_a_traceback(db: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.db"
    shutil.copy(db, broken)
    with sqlite3.connect(broken) as conn:
        conn.execute("UPDATE entries SET data = '{nope' WHERE session_id = 'done' AND seq = 3")
    out = cli("show", "done", "--store", str(broken))
    assert out.exit_code == 1
    assert "journal entry 3 of session 'done' is corrupt: data is not valid JSON" in out.stderr
    assert cli("list", "--store", str(broken)).exit_code == 0  # the summary rows still read


def test_an_unreachable_postgres_is_a_clear_error_without_the_password() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"postgresql://tether:s3cret@127.0.0.1:{port}/db"
    out = cli("list", "--store", url)
    assert out.exit_code == 1
    assert f"PostgreSQL store at 127.0.0.1:{port}/db: connecting failed" in out.stderr
    assert "Check that the server is running" in out.stderr
    assert "s3cret" not in out.output


def url_of(dsn: str) -> str:
    """A postgresql:// URL equivalent to a key=value DSN (options and all)."""
    from psycopg.conninfo import conninfo_to_dict

    info = {k: str(v) for k, v in conninfo_to_dict(dsn).items()}
    user = quote(info.pop("user", ""), safe="")
    if "password" in info:
        user += ":" + quote(info.pop("password"), safe="")
    host = info.pop("host", "localhost")
    port = info.pop("port", "5432")
    dbname = quote(info.pop("dbname", ""), safe="")
    if host.startswith("/"):  # a unix socket directory goes in the query
        info["host"] = host
        host = ""
    auth = f"{user}@" if user else ""
    return f"postgresql://{auth}{host}:{port}/{dbname}?{urlencode(info)}"


def test_a_postgresql_url_reads_the_same_sessions(pg_dsn: str) -> None:
    async def write() -> None:
        store = PostgresStore(pg_dsn)
        try:
            agent = Agent(
                model=ScriptedModel([calls(("add", {"a": 4, "b": 4})), "eight"]),
                tools=[add],
                store=store,
                session_id="pg-1",
            )
            await agent.invoke_async("add on postgres")
        finally:
            await store.close()

    asyncio.run(write())
    url = url_of(pg_dsn)
    assert "search_path" in url  # the fixture's fresh schema travels in the URL query
    listed = cli("list", "--store", url)
    assert listed.exit_code == 0, listed.output
    assert session_ids(listed.stdout) == ["pg-1"]
    shown = cli("show", "pg-1", "--store", url)
    assert "← add [ok]  call_1_0: 8" in shown.stdout
    exported = rows(cli("export", "pg-1", "--store", url).stdout)
    assert exported[-1] == {"role": "assistant", "content": "eight"}


# -- store URLs ---------------------------------------------------------------------


def test_store_urls() -> None:
    assert sqlite_path("runs/tether.db") == "runs/tether.db"
    assert sqlite_path("sqlite:///runs/tether.db") == "runs/tether.db"
    assert sqlite_path("sqlite:////abs/tether.db") == "/abs/tether.db"
    assert sqlite_path("postgresql://u@h/db") is None
    assert sqlite_path("postgres://u@h/db") is None
    with pytest.raises(StoreUnavailable, match="unsupported store URL scheme 'mysql'"):
        sqlite_path("mysql://u:pw@h/db")
    assert describe("postgresql://u:pw@h:5/db") == "postgresql://u:***@h:5/db"
    assert describe("postgresql://h/db?password=pw&x=1") == "postgresql://h/db?password=***&x=1"
    store = open_store("postgres://u@127.0.0.1/db?options=-csearch_path%3Dabc")
    assert isinstance(store, PostgresStore)
    assert store.dsn.endswith("options=-csearch_path%3Dabc")


# -- --json -------------------------------------------------------------------------


def test_list_and_show_have_json_output(db: Path) -> None:
    listed = rows(cli("list", "--json", "--store", str(db)).stdout)
    assert [r["session_id"] for r in listed] == ["susp", "batch", "done"]
    assert [r["status"] for r in listed] == ["suspended", "completed", "completed"]
    assert all(r["version"] > 0 and r["updated_at"] >= r["created_at"] for r in listed)
    assert cli("list", "--json", "--status", "failed", "--store", str(db)).stdout == ""
    out = cli("show", "susp", "--json", "--store", str(db))
    assert out.exit_code == 0, out.output
    [shown] = rows(out.stdout)
    assert (shown["session_id"], shown["status"]) == ("susp", "suspended")
    assert shown["messages"][0] == {
        "role": "user",
        "content": [{"type": "text", "text": "clean up"}],
    }
    [waiting] = shown["interrupts"]
    assert waiting["name"] == "approve_delete"
    assert [c["call"]["name"] for c in shown["open_batch"]] == ["add", "delete"]
    assert shown["open_batch"][0]["result"]["content"] == "3"
    assert shown["open_batch"][1]["result"] is None
    done = rows(cli("show", "done", "--json", "--store", str(db)).stdout)[0]
    assert done["open_batch"] is None
    assert done["messages"][-1]["content"][0]["text"] == "The sum is 5."
    missing = cli("show", "nope", "--json", "--store", str(db))
    assert missing.exit_code == 1
    assert "no session 'nope'" in missing.stderr


def test_list_keeps_long_session_ids_whole_at_80_columns(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "ids.db")
    sid = "customer-support-ticket-4711-" + "x" * 30
    Agent(model=ScriptedModel(["hi"]), store=store, session_id=sid)("hello")
    narrow = CliRunner(env={**ENV, "COLUMNS": "80"}).invoke(
        app, ["sessions", "list", "--store", str(tmp_path / "ids.db")]
    )
    assert narrow.exit_code == 0, narrow.output
    assert any(sid in line for line in narrow.stdout.splitlines()), narrow.stdout
