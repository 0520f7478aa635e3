"""The main job: ``tether demo`` end to end, as a user runs it."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from tether.ops.demo import run_demo

TETHER = str(Path(sys.executable).with_name("tether"))


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"}
    return subprocess.run(
        [TETHER, "demo", *args],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env=env,
        cwd=cwd,
        timeout=120,
        check=False,
    )


def printed_commands(text: str, after: str) -> list[str]:
    """The block of command lines the demo printed right after the rule titled ``after``."""
    starts = (TETHER + " ", "tether ", "TETHER_DEMO_DIR=")
    commands: list[str] = []
    for line in text.split(after, 1)[1].splitlines()[1:]:
        if not line.startswith(starts):
            break
        commands.append(line)
    return commands


def test_demo_with_approve_deletes_the_rotated_logs_and_protects_config(tmp_path):
    out = run_cli("--approve", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "scripted model" in text
    assert "TETHER_MODEL" in text  # honest about the model
    assert "stop reason interrupt, 2 approval(s) pending" in text  # process 1 exits suspended
    assert "approval Delete app.log.1 from the workspace?" in text
    assert "verdict: approved" in text
    assert "a separate process resumes the saved session" in text
    assert "config.yaml is a configuration file" in text  # the Deny verdict
    assert "files deleted   │ app.log.1, app.log.2" in text
    assert "stop reason     │ end_turn" in text


def test_the_printed_commands_work_as_printed_after_the_demo(tmp_path):
    out = run_cli("--approve", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "tether-demo" / "tether.db").exists()  # kept, in the working directory
    afterwards = printed_commands(out.stdout, "afterwards: the store stays in tether-demo/")
    operator = printed_commands(out.stdout, "operator: the session is suspended")
    assert len(afterwards) == 5
    assert any(" approvals list --store tether-demo/tether.db" in c for c in operator)
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    env.pop("TETHER_STORE", None)
    runnable = [c for c in operator if " list " in c or " show " in c or " worker " in c]
    for command in afterwards + runnable:
        done = subprocess.run(
            command, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, (command, done.stdout, done.stderr)
    listed = subprocess.run(
        [TETHER, "sessions", "list", "--json", "--store", "tether-demo/tether.db"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert [json.loads(line)["status"] for line in listed.stdout.splitlines()] == ["completed"]
    [worker] = [c for c in operator if " worker " in c]
    assert worker.startswith("TETHER_DEMO_DIR=tether-demo ")
    again = run_cli("--deny", cwd=tmp_path)  # a second run starts the folder afresh
    assert again.returncode == 0, again.stderr
    assert "files deleted   │ none" in again.stdout


def test_demo_refuses_a_folder_it_did_not_make(tmp_path):
    (tmp_path / "tether-demo").mkdir()
    (tmp_path / "tether-demo" / "thesis.tex").write_text("precious")
    out = run_cli("--approve", cwd=tmp_path)
    assert out.returncode == 1
    assert "tether-demo exists and was not made by tether demo; move it or pass --dir" in out.stderr
    assert (tmp_path / "tether-demo" / "thesis.tex").read_text() == "precious"
    elsewhere = run_cli("--approve", "--dir", "other", cwd=tmp_path)
    assert elsewhere.returncode == 0, elsewhere.stderr
    assert "afterwards: the store stays in other/" in elsewhere.stdout


def test_demo_with_deny_changes_nothing(tmp_path):
    out = run_cli("--deny", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "verdict: denied" in out.stdout
    assert "files deleted   │ none" in out.stdout


def test_demo_without_a_terminal_or_flag_denies_and_says_how_to_approve(tmp_path):
    out = run_cli(cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "No terminal attached" in out.stdout
    assert "make demo DEMO_ARGS=--approve" in out.stdout
    assert "files deleted   │ none" in out.stdout


def test_demo_refuses_both_flags(tmp_path):
    out = run_cli("--approve", "--deny", cwd=tmp_path)
    assert out.returncode != 0
    assert "choose one of --approve and --deny" in out.stderr


def test_run_demo_adds_up_both_processes_from_the_journal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.chdir(tmp_path)
    console = Console(record=True, width=200)
    outcome = run_demo(approve=True, deny=False, console=console, directory=tmp_path / "d")
    assert outcome.stop_reason == "end_turn"
    assert outcome.model_calls == 4  # 3 before the approval, 1 after: none repeated
    assert outcome.tool_calls == 5  # list, 2 reads, 2 approved deletes (config denied)
    assert outcome.deleted == ["app.log.1", "app.log.2"]
    assert outcome.freed == 2640
    assert "bytes freed" in console.export_text()
