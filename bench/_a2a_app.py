"""The tether side of bench/protocols.py: ``tether serve --app _a2a_app:agent_factory``.

A scripted agent that replies at once (``hi: <the message>``), no tools; its sessions are
durable in the SQLite store named by ``TETHER_BENCH_STORE``.
"""

from __future__ import annotations

import os
from typing import Any

from tether import Agent
from tether.durable import Store
from tether.models import ScriptedModel
from tether.ops.store_url import open_store

_STORES: dict[str, Store] = {}


def _reply(messages: list[Any], tools: list[Any]) -> str:
    return f"hi: {messages[-1].text}"


def agent_factory(session_id: str) -> Agent:
    url = os.environ["TETHER_BENCH_STORE"]
    store = _STORES.get(url) or _STORES.setdefault(url, open_store(url))
    return Agent(model=ScriptedModel(_reply), store=store, session_id=session_id, name="bench")
