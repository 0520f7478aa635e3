"""The lease contract, on all three stores: one live holder per session."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tether.durable import LeaseLost, SessionBusy, SessionNotFound, Store

WORKER = Path(__file__).with_name("_worker.py")
MSG: dict[str, Any] = {"role": "user", "content": "hi"}


def _hold_and_die(backend: Any, session_id: str) -> str:
    """Run a process that acquires the lease and exits without releasing it; its holder."""
    done = subprocess.run(
        [sys.executable, str(WORKER), backend.kind, backend.location, "hold", session_id],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip()


def _serve(backend: Any) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(WORKER), backend.kind, backend.location, "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


async def test_acquire_names_this_process(store: Store) -> None:
    await store.create("s")
    lease = await store.acquire_lease("s", ttl=30)
    assert lease.session_id == "s"
    assert (lease.host, lease.pid) == (socket.gethostname(), os.getpid())
    assert lease.holder == f"{lease.host}:{lease.pid}:{lease.token[:8]}"
    record = await store.load("s")
    assert record is not None
    assert record.lease == lease


async def test_second_holder_is_busy_until_release(backend: Any, store: Store) -> None:
    other = backend.open()
    await store.create("s")
    lease = await store.acquire_lease("s", ttl=30)
    with pytest.raises(SessionBusy) as info:
        await other.acquire_lease("s")
    err = info.value
    assert (err.session_id, err.holder, err.expires_at) == ("s", lease.holder, lease.expires_at)
    assert lease.holder in str(err)
    assert "expires" in str(err)
    await store.release_lease(lease)
    assert (await store.load("s")).lease is None  # type: ignore[union-attr]
    taken = await other.acquire_lease("s")
    assert taken.token != lease.token


async def test_reacquiring_own_live_lease_keeps_it(store: Store) -> None:
    await store.create("s")
    lease = await store.acquire_lease("s", ttl=30)
    again = await store.acquire_lease("s", ttl=60)
    assert again.token == lease.token
    assert again.expires_at >= lease.expires_at


async def test_renew_extends_expiry(store: Store) -> None:
    await store.create("s")
    lease = await store.acquire_lease("s", ttl=5)
    renewed = await store.renew_lease(lease, ttl=60)
    assert renewed.token == lease.token
    assert renewed.expires_at > lease.expires_at
    await store.append("s", 0, [("message", MSG)], lease=renewed)
    await store.append("s", 1, [("message", MSG)], lease=lease)  # same token, still current


async def test_expired_lease_is_taken_over(backend: Any, store: Store) -> None:
    other = backend.open()
    await store.create("s")
    stale = await store.acquire_lease("s", ttl=0.05)
    await asyncio.sleep(0.2)
    with pytest.raises(LeaseLost, match="expired"):
        await store.append("s", 0, [("message", MSG)], lease=stale)
    taken = await other.acquire_lease("s", ttl=30)
    assert taken.token != stale.token
    with pytest.raises(LeaseLost):
        await store.append("s", 0, [("message", MSG)], lease=stale)
    with pytest.raises(LeaseLost):
        await store.renew_lease(stale)
    await store.release_lease(stale)  # not ours anymore: no-op
    record = await store.load("s")
    assert record is not None
    assert record.lease is not None
    assert record.lease.token == taken.token
    assert record.version == 0
    await other.append("s", 0, [("message", MSG)], lease=taken)


async def test_append_without_lease_skips_the_check(backend: Any, store: Store) -> None:
    await store.create("s")
    await backend.open().acquire_lease("s")
    await store.append("s", 0, [("message", MSG)])
    assert (await store.load("s")).version == 1  # type: ignore[union-attr]


async def test_released_lease_cannot_append(store: Store) -> None:
    await store.create("s")
    lease = await store.acquire_lease("s")
    await store.release_lease(lease)
    with pytest.raises(LeaseLost, match="released"):
        await store.append("s", 0, [("message", MSG)], lease=lease)
    assert await store.read_entries("s") == []


async def test_lease_on_missing_session(store: Store) -> None:
    with pytest.raises(SessionNotFound):
        await store.acquire_lease("nope")
    with pytest.raises(ValueError, match="ttl"):
        await store.acquire_lease("nope", ttl=0)


async def test_dead_holder_process_is_taken_over_at_once(backend: Any, store: Store) -> None:
    backend.needs_processes()
    await store.create("s")
    dead_holder = await asyncio.to_thread(_hold_and_die, backend, "s")
    record = await store.load("s")
    assert record is not None
    assert record.lease is not None
    assert record.lease.holder == dead_holder
    assert record.lease.pid != os.getpid()
    lease = await store.acquire_lease("s")  # ttl 300 left, but the holder process is gone
    assert lease.holder != dead_holder


async def test_live_holder_in_another_process_is_busy(backend: Any, store: Store) -> None:
    backend.needs_processes()
    await store.create("s")
    worker = _serve(backend)
    assert worker.stdin is not None
    assert worker.stdout is not None
    try:
        assert worker.stdout.readline().strip() == "ready"
        worker.stdin.write("lease s\n")
        worker.stdin.flush()
        assert worker.stdout.readline().strip() == "win"
        with pytest.raises(SessionBusy) as info:
            await store.acquire_lease("s")
        assert f":{worker.pid}:" in info.value.holder
    finally:
        worker.stdin.close()
        worker.wait(timeout=60)
