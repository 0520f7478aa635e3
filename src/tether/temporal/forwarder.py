"""Decisions made in tether's inbox, delivered to the waiting workflows as the Update.

An approval row of a Temporal session is decided like any other (``tether approvals``,
the HTTP API, the web inbox); the session then becomes ``ready``. Each worker's plugin
polls for such sessions and sends the rows' answers (``store.approvals.answers_for``) as
the :data:`~tether.temporal.workflow.ANSWER_UPDATE` of the workflow named in the session's
metadata. The Update's id is the session and its version, so two workers (or two polls)
sending the same decision deliver it once; the run then decides nothing new (the rows
already say the same), first decision wins.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Final

from tether.durable.claims import TEMPORAL_KEY
from tether.temporal.workflow import ANSWER_UPDATE

log = logging.getLogger("tether.temporal")

POLL_EVERY: Final = 0.5
BATCH: Final = 200


async def forward_decisions(client: Any, store: Any, every: float = POLL_EVERY) -> None:
    """Forever: deliver the answers of every ready Temporal session to its workflow."""
    sending: dict[str, asyncio.Task[None]] = {}
    while True:
        try:
            for summary in await store.list_sessions(status="ready", limit=BATCH):
                owner = summary.metadata.get(TEMPORAL_KEY)
                if not isinstance(owner, dict) or summary.session_id in sending:
                    continue
                answers = await store.approvals.answers_for(summary.session_id)
                if not answers:
                    continue
                update_id = f"inbox-{summary.session_id}-{summary.version}"
                task = asyncio.ensure_future(
                    _send(client, str(owner.get("workflow_id")), answers, update_id)
                )
                sending[summary.session_id] = task
                task.add_done_callback(_forget(sending, summary.session_id))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a store hiccup: log it and poll again
            log.warning("forwarding inbox decisions to Temporal failed: %r", exc)
        await asyncio.sleep(every)


def _forget(sending: dict[str, asyncio.Task[None]], session_id: str) -> Any:
    return lambda _: sending.pop(session_id, None)


async def _send(client: Any, workflow_id: str, answers: dict[str, Any], update_id: str) -> None:
    try:
        await client.get_workflow_handle(workflow_id).execute_update(
            ANSWER_UPDATE, args=[answers, None], id=update_id
        )
    except Exception as exc:  # refused (already answered, not waiting yet): said once
        log.info(
            "workflow %s did not take the inbox's answers (%s): %s", workflow_id, update_id, exc
        )
