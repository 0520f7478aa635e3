"""Two approvers decide the same approval at once, 100 trials: exactly one wins each time."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tether.control.interrupts import Interrupt
from tether.durable import ApprovalConflict, PostgresStore, SQLiteStore, Store
from tether.messages import ToolCall

CHILD = Path(__file__).parents[1] / "support" / "decide_child.py"
TRIALS = 100


async def requests(store: Store, n: int) -> list[str]:
    ids = []
    for i in range(n):
        session = f"race-{i}"
        await store.create(session)
        call = ToolCall(f"c{i}", "deploy", {"env": "prod"})
        interrupt = Interrupt(
            f"int_{i}", "confirm:Ops", "deploy?", "intervention", "before_tool_call", call
        )
        ids.append((await store.approvals.request(session, interrupt)).id)
    return ids


def test_two_processes_on_sqlite_exactly_one_wins_each_of_100_trials(tmp_path):
    db = tmp_path / "race.db"
    store = SQLiteStore(db)
    ids = asyncio.run(requests(store, TRIALS))
    start, step = time.time() + 2.0, 0.03
    children = [
        subprocess.Popen(
            [sys.executable, str(CHILD), str(db), name, str(start), str(step), *ids],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("alice", "bob")
    ]
    outputs = []
    for child in children:
        out, err = child.communicate(timeout=120)
        assert child.returncode == 0, err
        outputs.append(json.loads(out.strip().splitlines()[-1]))
    alice, bob = outputs
    contested = 0
    for index, approval_id in enumerate(ids):
        results = {"alice": alice[index], "bob": bob[index]}
        winners = [name for name, r in results.items() if r == ["won"]]
        assert len(winners) == 1, (index, results)
        [loser] = [name for name in results if name not in winners]
        assert results[loser] == ["lost", winners[0]]  # the conflict names who decided
        row = asyncio.run(store.approvals.get(approval_id))
        assert row.decided_by == winners[0]
        contested += 1
    assert contested == TRIALS
    wins = sum(r == ["won"] for r in alice)
    print(f"sqlite race: alice won {wins}, bob won {TRIALS - wins} of {TRIALS}")
    asyncio.run(store.close())


@pytest.mark.parametrize("trials", [TRIALS])
async def test_two_connections_on_postgres_exactly_one_wins_each_of_100_trials(pg_dsn, trials):
    first, second = PostgresStore(pg_dsn), PostgresStore(pg_dsn)
    ids = await requests(first, trials)
    await second.approvals.find(limit=1)  # open its pool
    tally = {"alice": 0, "bob": 0}
    for index, approval_id in enumerate(ids):
        deciders = [
            first.approvals.decide(approval_id, "approve", decided_by="alice"),
            second.approvals.decide(approval_id, "deny", decided_by="bob"),
        ]
        if index % 2:  # alternate who starts first
            deciders.reverse()
        outcomes = await asyncio.gather(*deciders, return_exceptions=True)
        conflicts = [o for o in outcomes if isinstance(o, ApprovalConflict)]
        won = [o for o in outcomes if not isinstance(o, BaseException)]
        assert len(won) == 1
        assert len(conflicts) == 1, outcomes
        assert conflicts[0].approval.decided_by == won[0].decided_by
        assert (await first.approvals.get(approval_id)).decided_by == won[0].decided_by
        tally[str(won[0].decided_by)] += 1
    print(f"postgres race: {tally}")
    assert sum(tally.values()) == trials
    await first.close()
    await second.close()
