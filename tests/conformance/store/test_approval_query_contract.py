"""The approval queries filter in the store, before the limit (every store)."""

from __future__ import annotations

from tether.control.interrupts import Interrupt
from tether.durable import Store
from tether.messages import ToolCall


async def _file(store: Store, index: int, tool: str) -> str:
    call = ToolCall(f"call-{index}", tool, {"n": index})
    interrupt = Interrupt(f"int-{index}", f"confirm:{tool}", "ok?", "intervention", "x", call)
    return (await store.approvals.request(f"s-{index}", interrupt)).id


async def test_find_filters_by_tool_before_the_limit(store: Store) -> None:
    # transfers are the newest rows: a limit applied before the tool filter would miss them
    for index in range(6):
        await _file(store, index, "delete")
    transfers = [await _file(store, 10 + index, "transfer") for index in range(5)]
    found = await store.approvals.find(tool="transfer", limit=5)
    assert sorted(a.id for a in found) == sorted(transfers)
    two = await store.approvals.find(tool="transfer", limit=2)
    assert len(two) == 2
    assert {a.tool for a in two} == {"transfer"}
    decided = await store.approvals.decide(transfers[0], "deny", decided_by="op")
    assert [a.id for a in await store.approvals.find(status="denied", tool="transfer")] == [
        decided.id
    ]
    assert await store.approvals.find(status="denied", tool="delete") == []
    assert len(await store.approvals.find(limit=1000)) == 11
