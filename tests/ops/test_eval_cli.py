"""``tether eval run`` (exit codes, --json, --baseline, --fail-under, --store) and ``tether eval
capture`` (recorded sessions as cases, redacted, read-only; the round trip back through run)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
from eval_app import make_agent
from ops_agents import SECRET, transfer_agent
from ops_cli import ENV, cli
from typer.testing import CliRunner
from worker_testing import pg_url

from tether.durable import SQLiteStore
from tether.evals import Case, Contains, Dataset, Report, ToolTrajectory
from tether.evals.dataset_io import FORMAT
from tether.ops.cli import app

APP = "eval_app:make_agent"
CASES = [
    Case("cats", "search cats", expected_tools=[{"name": "search", "args": {"query": "cats"}}]),
    Case("dogs", "search dogs", expected_tools=["search"], expected_output="dogs"),
    Case("hello", "hello", expected_output="echo: hello"),
]


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    path = tmp_path / "cases.yaml"
    Dataset(CASES, [ToolTrajectory(order="in_order", args="subset"), Contains()]).to_file(path)
    return path


def journaled(path: Path, session_ids: list[str]) -> list[str]:
    """Of ``session_ids``, those the store at ``path`` holds a journal of."""

    async def read() -> list[str]:
        store = SQLiteStore(path)
        try:
            return [s for s in session_ids if await store.load(s) is not None]
        finally:
            await store.close()

    return asyncio.run(read())


def test_run_passes_writes_json_and_journals_every_run(dataset: Path, tmp_path: Path) -> None:
    out_json, db = tmp_path / "report.json", tmp_path / "evals.db"
    out = cli("eval", "run", str(dataset), "--app", APP, "--json", str(out_json),
              "--store", str(db), "--fail-under", "1", "--repeat", "2")  # fmt: skip
    assert out.exit_code == 0, out.output
    assert "cats" in out.stdout
    assert "hello" in out.stdout
    report = Report.from_json(out_json)
    assert report.pass_rate == 1.0
    assert [(r.case, r.repeat) for r in report.rows] == [
        (c.name, rep) for c in CASES for rep in range(2)
    ]
    ids = [str(r.session_id) for r in report.rows]
    assert len(set(ids)) == 6
    assert journaled(db, ids) == ids


def test_fail_under_exits_1_below_the_threshold(dataset: Path, tmp_path: Path) -> None:
    echo = ["eval", "run", str(dataset), "--app", "eval_app:echo"]
    below = cli(*echo, "--fail-under", "0.9")
    assert below.exit_code == 1, below.output
    assert "pass rate 33.3% is under --fail-under 90.0%" in below.stdout  # only hello passes
    assert cli(*echo, "--fail-under", "0.3").exit_code == 0
    assert cli(*echo).exit_code == 0  # no threshold unless one is given
    broken = cli("eval", "run", str(dataset), "--app", "eval_app:broken", "--fail-under", "0")
    assert broken.exit_code == 0, broken.output  # error rows, shown, under no threshold
    assert "RuntimeError: no configuration" in broken.stdout
    assert cli("eval", "run", str(dataset), "--app", "eval_app:broken",
               "--fail-under", "0.01").exit_code == 1  # fmt: skip


def test_no_runs_is_under_any_threshold_and_tether_store_is_not_read(
    dataset: Path, tmp_path: Path
) -> None:
    empty = tmp_path / "empty.jsonl"
    Dataset([], [Contains("x")]).to_file(empty)
    assert cli("eval", "run", str(empty), "--app", APP).exit_code == 0
    out = cli("eval", "run", str(empty), "--app", APP, "--fail-under", "0")
    assert out.exit_code == 1, out.output
    assert "no runs: nothing passed, under --fail-under 0.0%" in out.stdout
    prod = tmp_path / "prod.db"
    env = {**ENV, "TETHER_STORE": str(prod)}
    ran = CliRunner(env=env).invoke(app, ["eval", "run", str(dataset), "--app", APP])
    assert ran.exit_code == 0, ran.output
    assert not prod.exists()


def test_baseline_regression_exits_1_and_names_the_cases(dataset: Path, tmp_path: Path) -> None:
    base = tmp_path / "base.json"
    first = cli("eval", "run", str(dataset), "--app", APP, "--json", str(base))
    assert first.exit_code == 0, first.output
    same = cli("eval", "run", str(dataset), "--app", APP, "--baseline", str(base))
    assert same.exit_code == 0, same.output
    assert "against --baseline: 0 regressed, 0 improved" in same.stdout
    worse = cli("eval", "run", str(dataset), "--app", "eval_app:echo", "--baseline", str(base))
    assert worse.exit_code == 1, worse.output
    assert "regressions against --baseline" in worse.stdout
    table = worse.stdout.split("regressions against --baseline")[1]
    assert "cats" in table
    assert "dogs" in table
    assert "ToolTrajectory" in table
    assert "100% -> 0%" in table
    assert "hello" not in table  # it still passes
    assert "4 regressed, 0 improved" in worse.stdout  # two cases, as a whole and trajectory
    fewer = tmp_path / "fewer.yaml"
    Dataset(CASES[:1], [ToolTrajectory()]).to_file(fewer)
    gone = cli("eval", "run", str(fewer), "--app", APP, "--baseline", str(base))
    assert gone.exit_code == 0, gone.output
    assert "gone: dogs, hello" in gone.stdout


def test_names_in_the_regressions_reach_the_terminal_escaped(tmp_path: Path) -> None:
    nasty = "cats\x1b[2J\u202egnp"
    path = tmp_path / "nasty.jsonl"
    cases = [Case(nasty, "search cats", expected_tools=["search"]), Case("gone\x07", "hi")]
    Dataset(cases, [ToolTrajectory(name="traj\x1b]0;x\x07")]).to_file(path)
    base = tmp_path / "base.json"
    assert cli("eval", "run", str(path), "--app", APP, "--json", str(base)).exit_code == 0
    Dataset(cases[:1], [ToolTrajectory(name="traj\x1b]0;x\x07")]).to_file(path)
    out = cli("eval", "run", str(path), "--app", "eval_app:echo", "--baseline", str(base))
    assert out.exit_code == 1, out.output
    table = out.stdout.split("regressions against --baseline")[1]
    assert "cats" in table
    assert "traj" in table
    assert "gone" in table
    for raw in ("\x1b", "\u202e", "\x07"):
        assert raw not in out.stdout


def test_usage_errors_exit_2_with_the_message_and_run_nothing(
    dataset: Path, tmp_path: Path
) -> None:
    db = tmp_path / "evals.db"
    bad = tmp_path / "bad.yaml"
    bad.write_text(f"format: {FORMAT}\ncases:\n- name: x\n  input: 3\n", encoding="utf-8")
    cases = [
        (["eval", "run", str(bad), "--app", APP], "case 'x': input must be a str"),
        (["eval", "run", str(tmp_path / "none.yaml"), "--app", APP], "none.yaml"),
        (["eval", "run", str(dataset), "--app", "nosuchmodule:make"], "nosuchmodule"),
        (["eval", "run", str(dataset), "--app", "eval_app:nothing"], "has no attribute"),
        (["eval", "run", str(dataset), "--app", APP, "--baseline", str(bad)],
         "is not a tether evals report"),
        (["eval", "run", str(dataset), "--app", APP, "--fail-under", "1.5"], "--fail-under"),
        (["eval", "run", str(dataset), "--app", APP, "--concurrency", "0"], "--concurrency"),
    ]  # fmt: skip
    for args, message in cases:
        out = cli(*args, "--store", str(db))
        assert out.exit_code == 2, (args, out.output)
        assert message in " ".join(out.output.split()), (args, out.output)
        assert not db.exists(), args  # nothing ran
    unwritable = tmp_path / "no" / "such" / "dir" / "report.json"
    out = cli("eval", "run", str(dataset), "--app", APP, "--json", str(unwritable))
    assert out.exit_code == 2, out.output
    assert "cannot write the report to" in out.output
    assert "hello" in out.stdout  # the report was still printed


def test_help_documents_the_exit_codes() -> None:
    out = cli("eval", "run", "--help")
    text = " ".join(out.stdout.split())
    assert "exit 0 (passed), 1 (the pass rate is under --fail-under" in text
    assert "2 (a usage error" in text
    assert "--html" in text
    assert "--no-progress" in text


def test_html_writes_the_page_with_timeline_links(dataset: Path, tmp_path: Path) -> None:
    page, out_json = tmp_path / "out.html", tmp_path / "r.json"
    out = cli("eval", "run", str(dataset), "--app", APP, "--html", str(page), "--json",
              str(out_json), "--server-url", "http://127.0.0.1:8787")  # fmt: skip
    assert out.exit_code == 0, out.output
    html = page.read_text(encoding="utf-8")
    assert html.count("<svg") == 4
    for row in Report.from_json(out_json).rows:
        assert f'href="http://127.0.0.1:8787/#timeline={row.session_id}"' in html
    assert "eval " not in out.stderr  # stdout is not a terminal: no bar unless asked


def test_progress_is_drawn_on_stderr_and_never_reaches_stdout_or_json(
    dataset: Path, tmp_path: Path
) -> None:
    out_json = tmp_path / "r.json"
    out = cli("eval", "run", str(dataset), "--app", APP, "--progress", "--json", str(out_json))
    assert out.exit_code == 0, out.output
    run_id = Report.from_json(out_json).run_id
    assert f"eval {run_id}" in out.stderr
    assert "3/3" in out.stderr
    assert "3/3" not in out.stdout
    assert "3/3" not in out_json.read_text()
    assert "passed, 0 errors" not in out_json.read_text()
    quiet = cli("eval", "run", str(dataset), "--app", APP, "--no-progress")
    assert quiet.exit_code == 0
    assert "3/3" not in quiet.stderr


def test_progress_is_on_by_default_when_stdout_is_a_terminal(dataset: Path) -> None:
    import os
    import pty
    import subprocess
    import sys

    support = Path(__file__).resolve().parents[1] / "support"
    src = Path(__file__).resolve().parents[2] / "src"
    env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{support}", "COLUMNS": "120"}
    env.pop("TETHER_STORE", None)
    main, tty = pty.openpty()
    try:
        ran = subprocess.run(
            [sys.executable, "-c", "from tether.ops.cli import app; app()", "eval", "run",
             str(dataset), "--app", APP],
            stdout=tty, stderr=subprocess.PIPE, env=env, timeout=120, check=False,
        )  # fmt: skip
    finally:
        os.close(tty)
        os.close(main)
    assert ran.returncode == 0, ran.stderr
    assert b"3/3" in ran.stderr  # the bar, on stderr: stdout (the terminal) has the table


def test_html_usage_errors_exit_2(dataset: Path, tmp_path: Path) -> None:
    page = tmp_path / "out.html"
    bad_url = cli("eval", "run", str(dataset), "--app", APP, "--html", str(page),
                  "--server-url", "javascript:alert(1)")  # fmt: skip
    assert bad_url.exit_code == 2, bad_url.output
    assert "takes the tether server's http(s) URL" in bad_url.output
    lone = cli("eval", "run", str(dataset), "--app", APP, "--server-url", "http://x")
    assert lone.exit_code == 2
    assert "give --html too" in lone.output
    assert not page.exists()  # refused before any run
    unwritable = tmp_path / "no" / "dir" / "out.html"
    out = cli("eval", "run", str(dataset), "--app", APP, "--html", str(unwritable))
    assert out.exit_code == 2, out.output
    assert "cannot write the report to" in out.output
    assert "hello" in out.stdout  # the report was still printed


def record(path: Path) -> None:
    store = SQLiteStore(path)
    make_agent(store=store, session_id="s-cats")("search cats")
    make_agent(store=store, session_id="s-hello")("hello")
    make_agent(store=store, session_id="s-rm")("delete /tmp/x")  # denied, then answered
    transfer_agent(store, "pay", [], interventions=[])("pay")
    asyncio.run(store.close())


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    live = tmp_path / "live.db"
    record(live)
    frozen = tmp_path / "frozen.db"
    shutil.copy(live, frozen)
    frozen.chmod(0o444)
    return frozen


def test_capture_then_run_passes_with_the_same_agent(recorded: Path, tmp_path: Path) -> None:
    before = recorded.read_bytes()
    out_file = tmp_path / "captured.yaml"
    out = cli("eval", "capture", "s-cats", "s-hello", "s-rm", "--out", str(out_file),
              "--store", str(recorded))  # fmt: skip
    assert out.exit_code == 0, out.output
    assert "3 cases written" in out.stdout
    assert recorded.read_bytes() == before
    dataset = Dataset.from_file(out_file)
    assert [e.name for e in dataset.evaluators] == ["ToolTrajectory", "Contains"]
    assert dataset.evaluators[0].params() == {"order": "in_order", "args": "subset"}
    cats, hello, rm = dataset.cases
    assert (cats.name, cats.input, cats.metadata) == (
        "s-cats",
        "search cats",
        {"session_id": "s-cats"},
    )
    assert [c.to_data() for c in cats.expected_tools or []] == [
        {"name": "search", "args": {"query": "cats"}}
    ]
    assert cats.expected_output == "done: results for cats (at most 5)"
    assert (hello.expected_tools, hello.expected_output) == ([], "echo: hello")
    assert [c.name for c in rm.expected_tools or []] == ["delete_file"]  # denied calls count
    passed = cli("eval", "run", str(out_file), "--app", APP, "--fail-under", "1")
    assert passed.exit_code == 0, passed.output
    changed = cli("eval", "run", str(out_file), "--app", "eval_app:echo", "--fail-under", "1")
    assert changed.exit_code == 1, changed.output


def test_capture_is_redacted_and_leaves_masked_arguments_out(
    recorded: Path, tmp_path: Path
) -> None:
    out_file = tmp_path / "pay.jsonl"
    out = cli("eval", "capture", "pay", "--out", str(out_file), "--store", str(recorded))
    assert out.exit_code == 0, out.output
    text = out_file.read_text(encoding="utf-8")
    assert SECRET not in text
    (case,) = Dataset.from_file(out_file).cases
    assert [c.to_data() for c in case.expected_tools or []] == [
        {"name": "transfer", "args": {"to": "bob", "amount": 500}}  # api_token was masked
    ]


def test_capture_of_a_missing_session_names_it_and_writes_nothing(
    recorded: Path, tmp_path: Path
) -> None:
    out_file = tmp_path / "cases.yaml"
    nasty = "gone\x1b[2J\u202e"
    out = cli("eval", "capture", "s-cats", nasty, "--out", str(out_file), "--store", str(recorded))
    assert out.exit_code == 1, out.output
    assert "no session 'gone" in out.output
    assert "\x1b[2J" not in out.output
    assert "\u202e" not in out.output
    assert not out_file.exists()
    bad = cli("eval", "capture", "s-cats", "--out", str(tmp_path / "cases.txt"),
              "--store", str(recorded))  # fmt: skip
    assert bad.exit_code == 2, bad.output
    assert "ends in .yaml, .yml or .jsonl" in " ".join(bad.output.split())
    assert not (tmp_path / "cases.txt").exists()
    missing_store = cli("eval", "capture", "s-cats", "--out", str(out_file),
                        "--store", str(tmp_path / "nothing.db"))  # fmt: skip
    assert missing_store.exit_code == 1, missing_store.output
    assert not (tmp_path / "nothing.db").exists()
    assert not out_file.exists()


def test_on_postgres_the_eval_runs_are_journaled_and_capture_back(
    dataset: Path, tmp_path: Path, pg_dsn: str
) -> None:
    url = pg_url(pg_dsn)
    report_path = tmp_path / "report.json"
    out = cli("eval", "run", str(dataset), "--app", APP, "--store", url,
              "--json", str(report_path))  # fmt: skip
    assert out.exit_code == 0, out.output
    ids = [str(r.session_id) for r in Report.from_json(report_path).rows]
    captured = tmp_path / "again.yaml"
    back = cli("eval", "capture", *ids, "--out", str(captured), "--store", url)
    assert back.exit_code == 0, back.output
    assert [c.input for c in Dataset.from_file(captured).cases] == [c.input for c in CASES]
    again = cli("eval", "run", str(captured), "--app", APP, "--fail-under", "1")
    assert again.exit_code == 0, again.output
