"""The store side of session search on all three stores: the index written with each
append, ranking, scope and exclusion in the query, bounded untrusted input, delete."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tether.durable import Store
from tether.durable.session_search import (
    BODY_MAX,
    HITS_MAX,
    QUERY_MAX,
    TERMS_MAX,
    TextQuery,
    parse_terms,
)
from tether.errors import InputError


def message(role: str, *texts: str) -> tuple[Any, dict[str, Any]]:
    return (
        "message",
        {"message": {"role": role, "content": [{"type": "text", "text": t} for t in texts]}},
    )


def tool_message(content: str) -> tuple[Any, dict[str, Any]]:
    block = {
        "type": "tool_result",
        "tool_call_id": "c1",
        "name": "lookup",
        "content": content,
        "is_error": False,
        "status": "ok",
    }
    return ("message", {"message": {"role": "tool", "content": [block]}})


async def session(store: Store, session_id: str, *entries: tuple[Any, dict[str, Any]]) -> None:
    record = await store.create(session_id)
    await store.append(session_id, record.version, list(entries))


async def search(store: Store, words: str, **options: Any) -> list[Any]:
    return await store.search_text(TextQuery(parse_terms(words), **options))  # type: ignore[attr-defined]


async def test_the_index_follows_appends_and_ranks_more_matching_words_first(
    stores: Callable[[], Store],
) -> None:
    store = stores()
    await session(store, "a-1", message("user", "the database migration failed"))
    await session(store, "a-2", message("user", "lunch plans"), message("assistant", "database"))
    await session(store, "a-3", ("state", {"state": {"x": "database migration"}}))
    await session(
        store,
        "a-4",
        tool_message("migration of the database: done"),
        message("system", "database migration"),
    )
    hits = await search(store, "database migration")
    assert {(h.session_id, h.seq, h.role) for h in hits} == {
        ("a-1", 1, "user"),
        ("a-2", 2, "assistant"),
        ("a-4", 1, "tool"),
    }
    assert hits[-1].session_id == "a-2"  # one word of two ranks last
    assert hits[0].text in ("the database migration failed", "migration of the database: done")
    assert all(h.at > 0 for h in hits)
    # a later append is searchable at once (same transaction as the entry)
    record = await store.load("a-2")
    assert record is not None
    await store.append("a-2", record.version, [message("user", "zebra crossing")])
    assert [(h.session_id, h.seq) for h in await search(store, "ZEBRA")] == [("a-2", 3)]
    # another store object (another process) sees it too
    other = stores()
    assert [h.seq for h in await search(other, "zebra")] == [3]


async def test_scope_and_exclude_are_applied_in_the_query(stores: Callable[[], Store]) -> None:
    store = stores()
    for sid in ("user-1-a", "user-1-b", "user-12-a", "User-1-c", "user-1%x", "user-1_y"):
        await session(store, sid, message("user", "shared secretword"))
    found = lambda hits: sorted(h.session_id for h in hits)  # noqa: E731
    assert found(await search(store, "shared", scope="user-1-*")) == ["user-1-a", "user-1-b"]
    assert found(await search(store, "shared", scope="user-1-?")) == ["user-1-a", "user-1-b"]
    # LIKE / GLOB characters in a scope are literal, and the glob is case-sensitive
    assert found(await search(store, "shared", scope="user-1%x")) == ["user-1%x"]
    assert found(await search(store, "shared", scope="user-1_*")) == ["user-1_y"]
    assert found(await search(store, "shared", scope="User-*")) == ["User-1-c"]
    assert found(await search(store, "shared", scope="user-1-*", exclude=("user-1-a",))) == [
        "user-1-b"
    ]
    assert len(await search(store, "shared", limit=2)) == 2


@pytest.mark.parametrize(
    "query",
    [
        '"unbalanced',
        "NEAR(a b",
        "a AND OR NOT b",
        "col:val",
        "* ^ - + ()",
        "'; DROP TABLE entries; --",
        "a & b | !c <-> d:*",
    ],
)
async def test_query_syntax_is_never_passed_through(
    stores: Callable[[], Store], query: str
) -> None:
    store = stores()
    await session(
        store, "q-1", message("user", "a b c d val drop table entries near col unbalanced")
    )
    hits = await search(store, query)  # no syntax error, no injection: words only
    expected = 1 if parse_terms(query) else 0
    assert len(hits) == expected
    assert [h.session_id for h in await search(store, "entries")] == ["q-1"]  # nothing dropped


async def test_operator_words_are_plain_words(stores: Callable[[], Store]) -> None:
    store = stores()
    await session(store, "ops-1", message("user", "this or that"))
    await session(store, "ops-2", message("user", "and not near"))
    for word, expected in (
        ("or", ["ops-1"]),
        ("AND", ["ops-2"]),
        ("not", ["ops-2"]),
        ("NEAR", ["ops-2"]),
    ):
        assert [h.session_id for h in await search(store, word)] == expected, word


async def test_bounds_on_untrusted_input(stores: Callable[[], Store]) -> None:
    store = stores()
    with pytest.raises(InputError, match=f"at most {QUERY_MAX}"):
        parse_terms("x" * (QUERY_MAX + 1))
    assert len(parse_terms(" ".join(f"w{i}" for i in range(40)))) == TERMS_MAX
    with pytest.raises(InputError, match=f"between 0 and {HITS_MAX}"):
        await search(store, "x", limit=HITS_MAX + 1)
    with pytest.raises(InputError, match="non-empty session-id glob"):
        await search(store, "x", scope="")
    await session(
        store, "long", message("user", "start " + "filler " * (BODY_MAX // 7) + "tailword")
    )
    assert [h.session_id for h in await search(store, "start")] == ["long"]
    assert await search(store, "tailword") == []  # beyond BODY_MAX: not indexed
    assert len((await search(store, "start"))[0].text) == BODY_MAX


async def test_deleting_a_session_drops_it_from_the_index(stores: Callable[[], Store]) -> None:
    store = stores()
    await session(store, "gone", message("user", "ephemeral words"))
    await session(store, "kept", message("user", "ephemeral words"))
    await store.delete("gone")
    assert [h.session_id for h in await search(store, "ephemeral")] == ["kept"]
