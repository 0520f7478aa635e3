"""Resume race: two processes resume the same approved interrupt at once, 100 trials per store.

Two long-lived workers (tests/support/race_worker.py) build the agent, report ready,
and wait at a start barrier (a ``go`` line written to both); then both call
``resume({id: "approve"})``. Per trial: the approved tool ran exactly once, exactly one
worker completed the run, the other got SessionBusy / SessionStateError ("not
suspended") / SessionConflict, and the journal is the winner's alone.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from tether.durable import PostgresStore, SQLiteStore, Store

WORKER = Path(__file__).parents[1] / "support" / "race_worker.py"
sys.path.insert(0, str(WORKER.parent))
from race_worker import build  # noqa: E402

TRIALS = 100
LOSER_ERRORS = {"SessionBusy", "SessionStateError", "SessionConflict"}
RESUMED_KINDS = [  # what one resume of the approved call writes, in order
    "interrupt_answered",
    "status",
    "tool_intent",
    "message",  # the tool message carries the call's result
    "message",
    "usage",
    "status",
]


class Worker:
    def __init__(self, url: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(WORKER), url],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def receive(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, f"worker {self.proc.pid} died (exit {self.proc.poll()})"
        message: dict[str, Any] = json.loads(line)
        return message

    def stop(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


async def suspend(store: Store, session: str, effects: Path) -> str:
    """Run the session up to its Confirm interrupt; return the interrupt id."""
    agent = build(store, session, effects)
    result = await agent.invoke_async("record it")
    assert result.stop_reason == "interrupt"
    [pending] = result.interrupts
    return str(pending.id)


async def race(store: Store, url: str, tmp_path: Path) -> None:
    effects = tmp_path / "effects"
    workers = [Worker(url), Worker(url)]
    outcomes: Counter[str] = Counter()
    started = time.monotonic()
    try:
        for trial in range(TRIALS):
            session = f"race-{trial:03d}"
            iid = await suspend(store, session, effects)
            before = [(e.seq, e.kind, e.data) for e in await store.read_entries(session)]
            order = workers if trial % 2 == 0 else workers[::-1]  # who hears "go" first
            message = json.dumps({"session": session, "iid": iid, "effects": str(effects)})
            for worker in order:
                worker.send(message)
            assert [w.receive() for w in order] == [{"ready": True}] * 2
            for worker in order:
                worker.send("go")
            answers = [w.receive() for w in order]
            winners = [a for a in answers if "ok" in a]
            losers = [a for a in answers if "error" in a]
            assert [w["ok"] for w in winners] == ["end_turn"], answers
            assert len(losers) == 1, answers
            assert losers[0]["error"] in LOSER_ERRORS, answers
            if losers[0]["error"] == "SessionStateError":
                assert "is not suspended" in losers[0]["message"], answers
            outcomes[losers[0]["error"]] += 1
            assert effects.read_text().splitlines().count(session) == 1, f"trial {trial}"
            after = [(e.seq, e.kind, e.data) for e in await store.read_entries(session)]
            assert after[: len(before)] == before  # the suspension's journal is untouched
            new_kinds = [kind for _, kind, _ in after[len(before) :]]
            assert new_kinds == RESUMED_KINDS, f"trial {trial}: {new_kinds}"
            record = await store.load(session)
            assert record is not None
            assert record.status == "completed"
            assert record.lease is None  # the winner released it; the loser took nothing
    finally:
        for worker in workers:
            worker.stop()
    lines = effects.read_text().splitlines()
    assert len(lines) == TRIALS == len(set(lines))
    print(
        f"\nresume race ({type(store).__name__}): {TRIALS} trials, the tool ran once in each; "
        f"losers: {dict(outcomes)}; {time.monotonic() - started:.1f} s"
    )


async def test_resume_race_sqlite(tmp_path: Path) -> None:
    db = tmp_path / "race.db"
    store = SQLiteStore(db)
    try:
        await race(store, f"sqlite:{db}", tmp_path)
    finally:
        await store.close()


async def test_resume_race_postgres(tmp_path: Path, pg_dsn: str) -> None:
    store = PostgresStore(pg_dsn)
    try:
        await race(store, pg_dsn, tmp_path)
    finally:
        await store.close()
