"""Two processes race on one session (SQLite and PostgreSQL): exactly one wins each time."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tether.durable import Store

WORKER = Path(__file__).with_name("_worker.py")
TRIALS = 100


@pytest.fixture
def workers(backend: Any) -> Iterator[list[subprocess.Popen[str]]]:
    """Two worker processes, each with its own store object on the backend."""
    backend.needs_processes()
    procs = [
        subprocess.Popen(
            [sys.executable, str(WORKER), backend.kind, backend.location, "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready"
        yield procs
    finally:
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.close()
        for proc in procs:
            proc.wait(timeout=60)


def race(procs: list[subprocess.Popen[str]], command: str) -> list[str]:
    """Send one command to both workers at once; return both answers."""
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write(command + "\n")
        proc.stdin.flush()
    answers = []
    for proc in procs:
        assert proc.stdout is not None
        answers.append(proc.stdout.readline().strip())
    return answers


async def test_append_race_has_exactly_one_winner(
    store: Store, workers: list[subprocess.Popen[str]]
) -> None:
    for trial in range(TRIALS):
        await store.create(f"race-{trial}")
    for trial in range(TRIALS):
        answers = race(workers, f"append race-{trial}")
        assert sorted(answers) == ["conflict", "win"], (trial, answers)
        record = await store.load(f"race-{trial}")
        assert record is not None
        assert record.version == 1
        assert len(record.entries) == 1
        winner = workers[answers.index("win")].pid
        assert record.entries[0].data == {"pid": winner}


async def test_lease_race_has_exactly_one_winner(
    store: Store, workers: list[subprocess.Popen[str]]
) -> None:
    for trial in range(TRIALS):
        await store.create(f"lease-{trial}")
    for trial in range(TRIALS):
        answers = race(workers, f"lease lease-{trial}")
        assert sorted(answers) == ["busy", "win"], (trial, answers)
        record = await store.load(f"lease-{trial}")
        assert record is not None
        assert record.lease is not None
        assert record.lease.pid == workers[answers.index("win")].pid
