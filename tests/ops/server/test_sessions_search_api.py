"""``GET /api/sessions?q=``: the id matches as before, plus ``matches``, the redacted
full-text hits of the words in the sessions' messages (SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from live_server import call, get_ok, live_server, seed
from ops_agents import SECRET, transfer_agent

from tether import Agent
from tether.durable import PostgresStore, SQLiteStore, Store
from tether.models import ScriptedModel
from tether.ops.server import create_app


@pytest.fixture(params=["sqlite", "postgres"])
async def served(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[str, dict[str, str]]]:
    def make() -> Store:
        if request.param == "sqlite":
            return SQLiteStore(tmp_path / "api.db")
        return PostgresStore(request.getfixturevalue("pg_dsn"))

    store = make()
    tokens, _ = await seed(store)
    await transfer_agent(store, "invoice-7", []).invoke_async(f"pay the invoice with {SECRET}")
    await Agent(
        model=ScriptedModel(["the invoice is paid"]), store=store, session_id="chat-1"
    ).invoke_async("was the <b>invoice</b> paid?")
    await store.close()
    with live_server(create_app(make(), close_store=True)) as url:
        yield url, tokens


def _get(url: str, token: str, q: str) -> Any:
    return get_ok(f"{url}/api/sessions?q={quote(q)}", token)


async def test_q_keeps_id_matching_and_adds_redacted_text_matches(
    served: tuple[str, dict[str, str]],
) -> None:
    url, tokens = served
    body = await asyncio.to_thread(_get, url, tokens["viewer"], "invoice")
    assert [s["session_id"] for s in body["sessions"]] == ["invoice-7"]  # ids, as before
    matches = body["matches"]
    assert {(m["session_id"], m["role"]) for m in matches} == {
        ("invoice-7", "user"),
        ("chat-1", "user"),
        ("chat-1", "assistant"),
    }
    assert "pay the invoice with ***" in [m["snippet"] for m in matches]
    assert "was the <b>invoice</b> paid?" in [
        m["snippet"] for m in matches
    ]  # raw: the page escapes
    assert SECRET not in json.dumps(body)
    secret = await asyncio.to_thread(_get, url, tokens["viewer"], SECRET)
    assert (secret["sessions"], secret["matches"]) == ([], [])
    syntax = await asyncio.to_thread(_get, url, tokens["viewer"], '"NEAR( invoice')
    assert {m["session_id"] for m in syntax["matches"]} == {"invoice-7", "chat-1"}
    plain = await asyncio.to_thread(get_ok, f"{url}/api/sessions", tokens["viewer"])
    assert "matches" not in plain  # no q: the list only
    status, _ = await asyncio.to_thread(call, "GET", f"{url}/api/sessions?q=invoice")
    assert status == 401
