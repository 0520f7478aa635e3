"""``tether replay``: the printed and the --json diff, exit codes, usage errors, --dry, --model,
--live-tools, escaping and redaction, and a recorded session left exactly as it was
(the file's bytes with --dry; the recorded rows otherwise, on SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import replay_app as ra
from ops_cli import cli
from worker_testing import pg_url

from tether.durable import PostgresStore, SQLiteStore, Store

APP = "replay_app:make_agent"
SECRET = "hunter2-very-secret"


@pytest.fixture
def log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "log.txt"
    monkeypatch.setenv(ra.LOG_ENV, str(path))
    return path


def record(store: Store, sid: str, *prompts: str) -> None:
    """A real session of the recorded agent (its interrupts approved), then the store closed."""

    async def go() -> None:
        agent = ra.make_agent(store=store, session_id=sid)
        for prompt in prompts:
            result = await agent.invoke_async(prompt)
            while result.stop_reason == "interrupt":
                result = await agent.resume_async({i.id: "approve" for i in result.interrupts})
        await store.close()

    asyncio.run(go())


def rows(url: str, sid: str, *, pg: bool = False) -> tuple[Any, ...]:
    """The session's row data: its record, journal, audit records and approvals."""

    async def go() -> tuple[Any, ...]:
        store: Store = PostgresStore(url) if pg else SQLiteStore(url)
        try:
            record = await store.load(sid)
            assert record is not None
            entries = [(e.seq, e.kind, e.data, e.at) for e in await store.read_entries(sid, 0)]
            audit = [(r.seq, r.event, r.data) for r in await store.audit.records(sid, 0, 10_000)]
            approvals = await store.approvals.find(session_id=sid, limit=10_000)
            return (record.version, record.status, record.updated_at, entries, audit, approvals)
        finally:
            await store.close()

    return asyncio.run(go())


def sessions(url: str) -> list[str]:
    async def go() -> list[str]:
        store = SQLiteStore(url)
        try:
            return sorted(s.session_id for s in await store.list_sessions(limit=100))
        finally:
            await store.close()

    return asyncio.run(go())


@pytest.fixture
def recorded(tmp_path: Path, log: Path) -> Path:
    path = tmp_path / "traffic.db"
    record(SQLiteStore(path), "rec", "note alpha", "send bob", f"login ann {SECRET}")
    assert log.read_text() == "alpha\nsent to bob\n"
    return path


def fingerprint(path: Path) -> tuple[bytes, int, list[str]]:
    return path.read_bytes(), path.stat().st_mtime_ns, sorted(p.name for p in path.parent.iterdir())


def test_a_converging_replay_prints_its_session_and_exits_0(recorded: Path, log: Path) -> None:
    before = rows(str(recorded), "rec")
    out = cli("replay", "rec", "--app", APP, "--store", str(recorded), "--strict")
    assert out.exit_code == 0, out.output
    assert log.read_text() == "alpha\nsent to bob\n"  # answered from the journal: nothing ran
    first = out.stdout.splitlines()[0]
    assert first.startswith("replayed rec as session replay-")
    replay_id = first.split()[4]
    assert sessions(str(recorded)) == sorted(["rec", replay_id])
    assert "converged: the same 3 tool calls, verdicts and answers" in out.stdout
    assert rows(str(recorded), "rec") == before  # the recording is not modified
    assert rows(str(recorded), replay_id)[1] == "completed"


def test_dry_leaves_the_store_file_byte_for_byte(recorded: Path, log: Path) -> None:
    before = fingerprint(recorded)
    out = cli("replay", "rec", "--app", "replay_app:loud", "--store", str(recorded), "--dry")
    assert out.exit_code == 0, out.output  # diverged, but not --strict
    assert "in memory (--dry: nothing kept)" in out.stdout
    assert "diverged: 0 calls added, 0 removed, 2 changed" in out.stdout
    assert fingerprint(recorded) == before
    assert log.read_text() == "alpha\nsent to bob\n"


def test_dry_replays_a_read_only_copy(recorded: Path, log: Path, tmp_path: Path) -> None:
    frozen = tmp_path / "copy" / "traffic.db"
    frozen.parent.mkdir()
    shutil.copy(recorded, frozen)
    frozen.chmod(0o444)
    before = fingerprint(frozen)
    out = cli("replay", "rec", "--app", APP, "--store", str(frozen), "--dry", "--strict")
    assert out.exit_code == 0, out.output
    assert "converged" in out.stdout
    assert fingerprint(frozen) == before  # no -wal or -shm, no byte changed


def test_a_diverging_replay_with_strict_exits_1_and_runs_nothing(
    recorded: Path, log: Path, tmp_path: Path
) -> None:
    out_path = tmp_path / "diff.json"
    out = cli("replay", "rec", "--app", "replay_app:loud", "--store", str(recorded),
              "--strict", "--json", str(out_path))  # fmt: skip
    assert out.exit_code == 1, out.output
    assert log.read_text() == "alpha\nsent to bob\n"
    diff = json.loads(out_path.read_text())
    assert (diff["converged"], diff["added"], diff["removed"], diff["changed"]) == (False, 0, 0, 2)
    assert [(c["tool"], c["kind"], c["answered"]) for c in diff["calls"]] == [
        ("append", "changed", "not run"),
        ("send", "same", "journal"),
        ("login", "changed", "not run"),
    ]
    assert diff["answers_changed"] == 2
    for text in (out.stdout, out_path.read_text()):
        assert SECRET not in text  # the recorded password: through the redaction path
    assert diff["calls"][2]["then_arguments"] == {"user": "ann", "password": "***"}


def test_live_tools_run_the_diverging_calls(recorded: Path, log: Path) -> None:
    out = cli("replay", "rec", "--app", "replay_app:loud", "--store", str(recorded),
              "--live-tools", "--json", "-")  # fmt: skip
    assert out.exit_code == 0, out.output
    assert log.read_text() == "alpha\nsent to bob\nALPHA\n"
    diff = json.loads(out.stdout)  # --json -: only the JSON on stdout
    assert [c["answered"] for c in diff["calls"]] == ["live", "journal", "live"]


def test_a_new_deny_rule_shows_as_a_changed_verdict(recorded: Path, log: Path) -> None:
    out = cli("replay", "rec", "--app", "replay_app:no_append", "--store", str(recorded),
              "--dry", "--json", "-")  # fmt: skip
    diff = json.loads(out.stdout)
    assert diff["verdicts_changed"] == 1
    [row] = [c for c in diff["calls"] if c["verdict_changed"]]
    assert (row["tool"], row["then"], row["now"], row["now_status"]) == (
        "append", "proceed", "deny", "denied",
    )  # fmt: skip
    table = cli("replay", "rec", "--app", "replay_app:no_append", "--store", str(recorded), "--dry")
    assert "proceed -> deny" in table.stdout


def test_model_replaces_the_factorys_model(recorded: Path, log: Path, tmp_path: Path) -> None:
    script = tmp_path / "turns.json"
    script.write_text(json.dumps(["nothing to do", "nothing", "nothing"]))
    out = cli("replay", "rec", "--app", APP, "--store", str(recorded), "--dry",
              "--model", f"scripted:{script}", "--json", "-")  # fmt: skip
    assert out.exit_code == 0, out.output
    diff = json.loads(out.stdout)
    assert (diff["removed"], diff["added"]) == (3, 0)
    assert [a["now"] for a in diff["answers"]] == ["nothing to do", "nothing", "nothing"]
    bad = cli("replay", "rec", "--app", APP, "--store", str(recorded), "--model", "nope")
    assert bad.exit_code == 2
    assert "--model: model string 'nope' must look like 'provider:model'" in bad.output


def test_usage_errors_exit_2_with_a_message(recorded: Path, log: Path, tmp_path: Path) -> None:
    async def empty() -> None:
        store = SQLiteStore(recorded)
        await store.create("empty")
        await store.close()

    asyncio.run(empty())
    before = fingerprint(recorded)
    cases = [
        (["nope", "--app", APP], "no session 'nope' in"),
        (["empty", "--app", APP], "session 'empty' has no user turn to replay"),
        (["rec", "--app", "replay_app"], "use module:factory"),
        (["rec", "--app", "no_such_module:make"], "cannot import 'no_such_module'"),
        (["rec", "--app", "replay_app:not_an_agent"], "returned dict, not an Agent"),
        (["rec", "--app", "replay_app:broken"], "RuntimeError: no configuration for \\x1b[31mprod"),
    ]
    for args, message in cases:
        out = cli("replay", *args, "--store", str(recorded))
        assert out.exit_code == 2, (args, out.output)
        assert message in " ".join(out.output.split()), (args, out.output)
        assert "\x1b" not in out.output
    no_dir = cli("replay", "rec", "--app", APP, "--store", str(recorded),
                 "--json", str(tmp_path / "no" / "diff.json"))  # fmt: skip
    assert no_dir.exit_code == 2
    assert "cannot write the diff to" in no_dir.output
    assert sessions(str(recorded)) == ["empty", "rec"]  # refused before anything ran
    missing = cli("replay", "rec", "--app", APP, "--store", str(tmp_path / "none.db"))
    assert missing.exit_code == 2
    assert "no tether store at" in missing.output
    assert not (tmp_path / "none.db").exists()
    assert fingerprint(recorded) == before


def test_recorded_text_is_escaped_on_the_terminal(tmp_path: Path, log: Path) -> None:
    path = tmp_path / "nasty.db"
    record(SQLiteStore(path), "rec", "note \x1b[2Jx\u202egnp")
    out = cli("replay", "rec", "--app", "replay_app:loud", "--store", str(path), "--dry")
    assert out.exit_code == 0, out.output
    assert "\x1b" not in out.stdout
    assert "\u202e" not in out.stdout
    assert "\\x1b[2Jx\\u202egnp" in out.stdout


def test_on_postgres_the_recorded_rows_stay_and_the_replay_is_a_new_session(
    pg_dsn: str, log: Path
) -> None:
    url = pg_url(pg_dsn)
    record(PostgresStore(pg_dsn), "rec", "note alpha", "send bob")
    before = rows(pg_dsn, "rec", pg=True)
    out = cli("replay", "rec", "--app", APP, "--store", url, "--strict")
    assert out.exit_code == 0, out.output
    replay_id = out.stdout.splitlines()[0].split()[4]
    assert rows(pg_dsn, "rec", pg=True) == before
    assert rows(pg_dsn, replay_id, pg=True)[1] == "completed"
    assert log.read_text() == "alpha\nsent to bob\n"
    diverged = cli("replay", "rec", "--app", "replay_app:loud", "--store", url, "--strict")
    assert diverged.exit_code == 1, diverged.output
    assert rows(pg_dsn, "rec", pg=True) == before
    assert log.read_text() == "alpha\nsent to bob\n"
