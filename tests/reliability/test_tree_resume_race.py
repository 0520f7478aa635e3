"""Resume race on a three-level agent tree: two processes resume the same answers at once.

Per trial: every side effect of the tree happened exactly once, exactly one process
completed the run, and the other was refused (SessionBusy while the winner holds the
top session's lease, or SessionStateError / SessionConflict once it has moved on).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

SUPPORT = Path(__file__).parents[1] / "support"

TRIALS = 8
LOSER_ERRORS = {"SessionBusy", "SessionStateError", "SessionConflict"}


@pytest.fixture(params=["sqlite", "postgres"])
def store_of(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    def where(trial: int) -> str:
        if request.param == "sqlite":
            return str(tmp_path / f"race-{trial}.db")
        dsn: str = request.getfixturevalue("pg_dsn")
        return dsn

    where.kind = request.param  # type: ignore[attr-defined]
    return where


def test_two_processes_resuming_a_tree_at_once_run_each_side_effect_once(
    store_of: Any, tmp_path: Path
) -> None:
    trials = TRIALS if store_of.kind == "sqlite" else 1  # one schema per test on PostgreSQL
    for trial in range(trials):
        db = store_of(trial)
        effects, go = tmp_path / f"effects-{trial}.txt", tmp_path / f"go-{trial}"
        script = [sys.executable, str(SUPPORT / "agent_tree.py"), db, str(effects)]
        start = subprocess.run([*script, "start"], capture_output=True, text=True, timeout=120)
        first = json.loads(start.stdout.strip().splitlines()[-1])
        answers = json.dumps({i["id"]: "approve" for i in first["interrupts"]})
        procs = [
            subprocess.Popen([*script, "race", answers, str(go)], stdout=subprocess.PIPE, text=True)
            for _ in range(2)
        ]
        deadline = time.monotonic() + 60
        while len(list(tmp_path.glob(f"go-{trial}.ready.*"))) < 2:  # both built and waiting
            assert time.monotonic() < deadline
            time.sleep(0.01)
        go.touch()
        outs = []
        for proc in procs:
            stdout, _ = proc.communicate(timeout=120)
            assert proc.returncode == 0
            outs.append(json.loads(stdout.strip().splitlines()[-1]))
        done = [o for o in outs if o.get("stop_reason") == "end_turn"]
        refused = [o["error"] for o in outs if "error" in o]
        assert len(done) == 1, outs
        assert done[0]["text"] == "planner done: researcher done: wrote a + wrote b"
        assert len(refused) == 1, outs
        assert refused[0] in LOSER_ERRORS, outs
        assert sorted(effects.read_text().split()) == ["a", "b"], f"trial {trial}"
