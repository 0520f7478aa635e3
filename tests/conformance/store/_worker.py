"""Subprocess helper for the cross-process store tests (run as a script, not collected).

python _worker.py KIND LOCATION hold SESSION   acquire a lease, print the holder, exit
                                               without releasing it
python _worker.py KIND LOCATION serve          per stdin line "append SID" / "lease SID",
                                               print "win", "conflict" or "busy"
"""

from __future__ import annotations

import asyncio
import os
import sys

from tether.durable import PostgresStore, SessionBusy, SessionConflict, SQLiteStore, Store


def open_store(kind: str, location: str) -> Store:
    return SQLiteStore(location) if kind == "sqlite" else PostgresStore(location)


async def hold(store: Store, session_id: str) -> None:
    lease = await store.acquire_lease(session_id, ttl=300)
    print(lease.holder, flush=True)
    os._exit(0)  # die holding the lease, like a crashed process


async def serve(store: Store) -> None:
    loop = asyncio.get_running_loop()
    print("ready", flush=True)
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        command, session_id = line.split()
        try:
            if command == "append":
                await store.append(session_id, 0, [("message", {"pid": os.getpid()})])
            else:
                await store.acquire_lease(session_id, ttl=300)
            print("win", flush=True)
        except SessionConflict:
            print("conflict", flush=True)
        except SessionBusy:
            print("busy", flush=True)
    await store.close()


async def main() -> None:
    kind, location, mode, *rest = sys.argv[1:]
    store = open_store(kind, location)
    if mode == "hold":
        await hold(store, rest[0])
    else:
        await serve(store)


if __name__ == "__main__":
    asyncio.run(main())
