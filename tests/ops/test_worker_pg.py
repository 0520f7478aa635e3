"""``tether worker`` processes sharing one PostgreSQL: exactly-once, and crash takeover."""

from __future__ import annotations

import asyncio
import collections
import re
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from worker_testing import (
    alive,
    approve,
    env,
    lines,
    pg_url,
    stop,
    suspend,
    wait_for,
    worker_cmd,
    workers,
)

from tether.durable import PostgresStore


async def test_three_workers_resume_200_sessions_exactly_once(pg_dsn: str, tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    store = PostgresStore(pg_dsn)
    sids = [f"s{i:03d}" for i in range(200)]
    await suspend(store, sids)
    url = pg_url(pg_dsn)
    cmd = worker_cmd(url, "--concurrency", "4", "--poll", "5")  # NOTIFY wakes them
    with workers([cmd] * 3, env(url, out), tmp_path) as procs:
        await asyncio.sleep(1.5)  # let them start and go idle (LISTEN)
        assert await approve(store) == 200

        async def all_completed() -> bool:
            alive(procs)
            return len(await store.list_sessions(status="completed", limit=1000)) == 200

        await wait_for(all_completed, 90, "200 completed sessions", every=0.25)
        assert [stop(p) for p in procs] == [0, 0, 0]
    assert collections.Counter(lines(out)) == {f"{sid}:1": 1 for sid in sids}
    done: collections.Counter[str] = collections.Counter()
    per_worker = []
    for i in range(3):
        found = re.findall(r"(s\d{3}) completed", (tmp_path / f"worker{i}.log").read_text())
        done.update(found)
        per_worker.append(len(found))
    assert done == {sid: 1 for sid in sids}  # each session completed by exactly one worker
    assert sum(n > 0 for n in per_worker) >= 2, per_worker  # the work was shared
    await store.close()


async def test_a_killed_workers_session_is_taken_over_after_its_lease_expires(
    pg_dsn: str, tmp_path: Path
) -> None:
    out, ttl = tmp_path / "out.txt", 2.0
    store = PostgresStore(pg_dsn)
    await suspend(store, ["slow-1", "s1", "s2", "s3"])
    await approve(store, ["slow-1"])
    url = pg_url(pg_dsn)
    environ = env(url, out, TETHER_WORKER_SLOW="60", TETHER_WORKER_LEASE_TTL=str(ttl))
    first = worker_cmd(url, "--lease-ttl", str(ttl), host="elsewhere")  # another machine
    with workers([first], environ, tmp_path) as [doomed]:
        await wait_for(lambda: _has(out, "slow-1:1"), 30, "the tool to start in worker 1")
        record = await store.load("slow-1")
        assert record is not None
        assert record.lease is not None
        assert record.lease.host == "elsewhere"
        assert record.lease.pid == doomed.pid
        doomed.send_signal(signal.SIGKILL)  # mid-tool: the side effect happened, no result
        killed_at = time.time()
        doomed.wait(timeout=10)
    assert (await store.load("slow-1")).status == "running"  # type: ignore[union-attr]
    (tmp_path / "takeover").mkdir()
    second = worker_cmd(url, "--lease-ttl", str(ttl), "--poll", "0.1")
    with workers([second, second], environ, tmp_path / "takeover") as procs:
        await approve(store, ["s1", "s2", "s3"])

        async def in_doubt() -> list:  # type: ignore[type-arg]
            alive(procs)
            return [a for a in await store.approvals.pending() if a.source == "in_doubt"]

        [question] = await wait_for(in_doubt, 30, "the in_doubt approval")
        # nobody could take the session before the dead worker's lease expired
        delay = question.requested_at - killed_at
        print(f"in_doubt approval {delay:.2f} s after the kill (lease ttl {ttl} s)")
        assert delay >= ttl / 3, delay
        assert question.requested_at <= record.lease.expires_at + ttl + 5
        assert question.session_id == "slow-1"
        assert question.tool == "append_line"
        assert lines(out).count("slow-1:1") == 1  # not re-run: a human decides
        await store.approvals.decide(
            question.id, "respond", decided_by="oncall", response={"skip": "appended"}
        )

        async def finished() -> bool:
            done = await store.list_sessions(status="completed")
            return len(done) == 4

        await wait_for(finished, 30, "all four sessions to complete")
        assert [stop(p) for p in procs] == [0, 0]
    assert collections.Counter(lines(out)) == {"slow-1:1": 1, "s1:1": 1, "s2:1": 1, "s3:1": 1}
    logs = "".join(p.read_text() for p in (tmp_path / "takeover").glob("*.log"))
    assert "slow-1 suspended" in logs, logs
    assert "slow-1 completed" in logs, logs
    await store.close()


async def _has(out: Path, line: str) -> bool:
    return line in lines(out)
