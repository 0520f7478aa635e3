"""The main job: ``tether demo`` end to end, as a user runs it."""

import os
import subprocess
import sys
from pathlib import Path

from rich.console import Console

from tether.ops.demo import run_demo

TETHER = str(Path(sys.executable).with_name("tether"))


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"}
    return subprocess.run(
        [TETHER, "demo", *args],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env=env,
        timeout=120,
        check=False,
    )


def test_demo_with_approve_deletes_the_rotated_logs_and_protects_config():
    out = run_cli("--approve")
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


def test_demo_with_deny_changes_nothing():
    out = run_cli("--deny")
    assert out.returncode == 0, out.stderr
    assert "verdict: denied" in out.stdout
    assert "files deleted   │ none" in out.stdout


def test_demo_without_a_terminal_or_flag_denies_and_says_so():
    out = run_cli()
    assert out.returncode == 0, out.stderr
    assert "No terminal attached" in out.stdout
    assert "files deleted   │ none" in out.stdout


def test_demo_refuses_both_flags():
    out = run_cli("--approve", "--deny")
    assert out.returncode != 0
    assert "choose one of --approve and --deny" in out.stderr


def test_run_demo_adds_up_both_processes_from_the_journal():
    console = Console(record=True, width=200)
    outcome = run_demo(approve=True, deny=False, console=console)
    assert outcome.stop_reason == "end_turn"
    assert outcome.model_calls == 4  # 3 before the approval, 1 after: none repeated
    assert outcome.tool_calls == 5  # list, 2 reads, 2 approved deletes (config denied)
    assert outcome.deleted == ["app.log.1", "app.log.2"]
    assert outcome.freed == 2640
    assert "bytes freed" in console.export_text()
