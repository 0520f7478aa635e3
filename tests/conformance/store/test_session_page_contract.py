"""``store.session_page``: filter, search, paging and counts in the store (every store)."""

from __future__ import annotations

import pytest

from tether.control.interrupts import Interrupt
from tether.durable import Store
from tether.errors import InputError
from tether.messages import ToolCall


def _usage(model_calls: int, tool_calls: int, tokens_in: int, tokens_out: int) -> dict[str, int]:
    return {
        "input_tokens": tokens_in,
        "output_tokens": tokens_out,
        "total_tokens": tokens_in + tokens_out,
        "model_calls": model_calls,
        "tool_calls": tool_calls,
        "model_retries": 0,
        "model_fallbacks": 0,
    }


async def _session(store: Store, sid: str, status: str, runs: list[dict[str, int]]) -> None:
    await store.create(sid)
    entries = [("usage", {"usage": u}) for u in runs]
    entries.append(("status", {"status": status, "reason": None}))
    await store.append(sid, (await store.load(sid)).version, entries, status=status)  # type: ignore[arg-type,union-attr]


async def test_a_page_counts_usage_and_pending_approvals_and_orders_by_activity(
    store: Store,
) -> None:
    await _session(store, "team/a-1", "completed", [_usage(2, 1, 100, 20)])
    await _session(store, "team/b-2", "suspended", [_usage(1, 1, 10, 5), _usage(3, 2, 30, 7)])
    await _session(store, "other-3", "failed", [])
    interrupt = Interrupt("i-1", "confirm:x", "ok?", "intervention", "x", ToolCall("c", "x", {}))
    await store.approvals.request("team/b-2", interrupt)

    page = await store.session_page()
    assert page.total == 3
    assert [s.session_id for s in page.sessions] == ["other-3", "team/b-2", "team/a-1"]
    b = page.sessions[1]
    assert (b.status, b.model_calls, b.tool_calls, b.input_tokens, b.output_tokens) == (
        "suspended",
        4,
        3,
        40,
        12,
    )
    assert (b.total_tokens, b.pending_approvals) == (52, 1)
    assert page.sessions[0].model_calls == 0
    assert page.sessions[0].pending_approvals == 0


async def test_status_and_search_filter_before_paging(store: Store) -> None:
    for index in range(7):
        await _session(store, f"job/{index}", "completed" if index % 2 else "failed", [])
    await _session(store, "Job/upper", "completed", [])
    done = await store.session_page(status="completed", limit=2)
    assert done.total == 4  # 1, 3, 5 and Job/upper
    assert len(done.sessions) == 2
    assert {s.status for s in done.sessions} == {"completed"}
    rest = await store.session_page(status="completed", offset=2, limit=2)
    assert {s.session_id for s in done.sessions + rest.sessions} == {
        "job/1",
        "job/3",
        "job/5",
        "Job/upper",
    }
    assert rest.offset == 2
    found = await store.session_page(search="b/")  # a substring, case-sensitive
    assert found.total == 8
    exact = await store.session_page(search="job/")
    assert exact.total == 7
    assert (await store.session_page(search="%")).total == 0  # no LIKE wildcards
    assert (await store.session_page(search="_")).total == 0
    past_the_end = await store.session_page(offset=100)
    assert (past_the_end.total, past_the_end.sessions) == (8, [])


async def test_bad_paging_arguments_name_the_argument(store: Store) -> None:
    with pytest.raises(InputError, match="offset and limit must be >= 0"):
        await store.session_page(offset=-1)
    with pytest.raises(InputError, match="unknown session status 'done'"):
        await store.session_page(status="done")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="longer than 200"):
        await store.session_page(search="x" * 201)


async def test_a_page_sums_the_runs_costs_and_none_stays_unknown(store: Store) -> None:
    from decimal import Decimal

    priced = [{**_usage(1, 0, 10, 5), "cost": "0.0125"}, {**_usage(1, 0, 10, 5), "cost": "0.5"}]
    await _session(store, "paid", "completed", [*priced, _usage(1, 0, 1, 1)])
    await _session(store, "free", "completed", [_usage(1, 0, 1, 1)])
    await _session(store, "odd", "completed", [{**_usage(1, 0, 1, 1), "cost": "NaN"}])
    page = await store.session_page()
    costs = {s.session_id: s.cost for s in page.sessions}
    assert costs == {"paid": Decimal("0.5125"), "free": None, "odd": None}
