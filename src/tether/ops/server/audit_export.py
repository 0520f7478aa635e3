"""``GET /api/audit/export``: the chain verified, then its records streamed as JSONL up to
the verified head, a page of the store at a time (as ``tether audit export`` writes them)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Final

from starlette.responses import StreamingResponse

from tether.ops.server.responses import NO_STORE
from tether.ops.server.views import verify_json

if TYPE_CHECKING:
    from tether.durable import Store
    from tether.ops.server.offload import StoreRunner

NDJSON: Final = "application/x-ndjson"
EXPORT_PAGE: Final = 1000


def file_part(text: str) -> str:
    """``text`` as a safe piece of a download's file name."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", text)[:100]


async def export_audit(run: StoreRunner, store: Store, session: str | None) -> StreamingResponse:
    """JSONL: a first line ``{"chain": <verify report>, "session_id", "exported_at",
    "through_seq"}``, then the records (of one session, when asked) in chain order up
    to the verified head, as ``tether audit export`` writes them; streamed a page at a
    time."""
    report = await run(store.audit.verify)
    head = report.head[0]
    header = {
        "chain": verify_json(report),
        "session_id": session,
        "exported_at": time.time(),
        "through_seq": head,
    }

    async def lines() -> AsyncIterator[str]:
        yield json.dumps(header, sort_keys=True) + "\n"
        after = 0
        while after < head:
            page = await run(store.audit.records, session, after, EXPORT_PAGE)
            for r in page:
                if r.seq > head:  # appended after the verification: not covered by it
                    return
                yield json.dumps(r.to_dict(), ensure_ascii=False, sort_keys=True) + "\n"
            if len(page) < EXPORT_PAGE:
                return
            after = page[-1].seq

    name = "audit" + ("" if session is None else "-" + file_part(session)) + ".jsonl"
    headers = {
        **NO_STORE,
        "Content-Disposition": f'attachment; filename="{name}"',
        "X-Tether-Audit-Chain": "ok" if report.ok else "broken",
    }
    return StreamingResponse(lines(), media_type=NDJSON, headers=headers)
