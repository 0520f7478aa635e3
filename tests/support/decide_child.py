"""Child process of the double-decision race: decide each approval at a scheduled instant.

Usage: python decide_child.py DB NAME START_AT STEP ID [ID ...]
Prints one JSON line: [["won"] | ["lost", decided_by], ...] in the order of the ids.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

from tether.durable import ApprovalConflict, SQLiteStore


async def main() -> None:
    db, name, start, step, *ids = sys.argv[1:]
    store = SQLiteStore(db, busy_timeout=30)
    await store.approvals.find(limit=1)  # open the connection before the first trial
    out: list[list[str]] = []
    for index, approval_id in enumerate(ids):
        delay = float(start) + index * float(step) - time.time()
        if delay > 0:
            time.sleep(delay)  # noqa: ASYNC251 - a precise start, nothing else runs
        try:
            await store.approvals.decide(approval_id, "approve", decided_by=name)
            out.append(["won"])
        except ApprovalConflict as exc:
            out.append(["lost", str(exc.approval.decided_by)])
    await store.close()
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main())
