"""The session_search tool on all three stores: real agents write past sessions, another
agent searches them through its tool; ranking, redaction, scope isolation, bounds."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tether import Agent, tool
from tether.durable import Store
from tether.errors import InputError
from tether.governance.search import SNIPPET_MAX, search_sessions
from tether.models import ScriptedModel
from tether.tools import session_search

PASSWORD = "hunter2-orchid-9931"
TOKEN = "sk-live-0a1b2c3d4e5f6789"


@tool
def login(user: str, password: str) -> str:
    """Log a user in."""
    return f"logged in as {user} using {password}; the orchid dashboard is open"


async def past_session(store: Store, session_id: str, prompt: str, answer: str) -> None:
    agent = Agent(model=ScriptedModel([answer]), store=store, session_id=session_id)
    await agent.invoke_async(prompt)


async def secret_session(store: Store, session_id: str) -> None:
    """A session whose tool call holds a password (masked by the default redaction) that
    the tool result and the final answer echo, plus a token in free text."""
    agent = Agent(
        model=ScriptedModel(
            [
                {"tool_calls": [{"name": "login", "args": {"user": "ada", "password": PASSWORD}}]},
                f"Done: the orchid dashboard works with {PASSWORD} (api_key={TOKEN})",
            ]
        ),
        tools=[login],
        store=store,
        session_id=session_id,
    )
    await agent.invoke_async("please open the orchid dashboard")


def searcher(store: Store, session_id: str, query: str, **options: Any) -> Agent:
    """An agent that calls session_search once and answers with the tool's result."""

    def play(messages: list[Any], specs: list[Any]) -> Any:
        if messages[-1].role == "tool":
            return "done"
        return {"tool_calls": [{"name": "session_search", "args": {"query": query}}]}

    return Agent(
        model=ScriptedModel(play),
        tools=[session_search(**options)],
        store=store,
        session_id=session_id,
    )


async def ask(store: Store, query: str, **options: Any) -> Any:
    options.setdefault("scope", "*")
    agent = searcher(store, options.pop("session_id", "asker"), query, **options)
    await agent.invoke_async("search")
    text = [r.content for m in agent.messages for r in m.tool_results][-1]
    return json.loads(text) if text.startswith("{") else text


async def test_ranked_hits_with_session_time_role_and_snippet(stores: Callable[[], Store]) -> None:
    store = stores()
    await past_session(
        store, "s-1", "how do I rotate the database credentials", "Use the vault rotation job."
    )
    await past_session(
        store, "s-2", "the database is slow", "Add an index on the orders table for the database."
    )
    await past_session(store, "s-3", "what is for lunch", "Soup.")
    found = await ask(stores(), "database credentials")
    hits = found["hits"]
    # both words first, on every store (bm25, ts_rank, the count of words)
    assert (hits[0]["session_id"], hits[0]["role"]) == ("s-1", "user")
    assert {h["session_id"] for h in hits} == {"s-1", "s-2"}
    assert all(
        set(h) == {"session_id", "seq", "at", "time", "role", "snippet", "rank"} for h in hits
    )
    assert hits[0]["rank"] >= hits[-1]["rank"]
    assert any(h["snippet"] == "how do I rotate the database credentials" for h in hits)
    assert hits[0]["time"].endswith("Z")
    # the asking session is left out (its messages are in the model's context)
    again = await ask(store, "credentials", session_id="s-1")
    assert again == {"hits": [], "note": "no past session matches these words"}


async def test_a_redacted_value_is_never_in_a_snippet_nor_found_by_itself(
    stores: Callable[[], Store],
) -> None:
    store = stores()
    await secret_session(store, "secret-1")
    hits = (await ask(store, "orchid dashboard"))["hits"]
    assert {h["role"] for h in hits} == {"user", "tool", "assistant"}
    text = json.dumps(hits)
    assert PASSWORD not in text
    assert TOKEN not in text
    assert "hunter2" not in text
    [tool_hit] = [h for h in hits if h["role"] == "tool"]
    assert tool_hit["snippet"] == "logged in as ada using ***; the orchid dashboard is open"
    [answer] = [h for h in hits if h["role"] == "assistant"]
    assert answer["snippet"] == "Done: the orchid dashboard works with *** (api_key=***"
    # the raw index holds the secret: a query for it (or a word of it) finds nothing
    for query in ("hunter2", "9931", "hunter2 9931", TOKEN, "0a1b2c3d4e5f6789"):
        assert await ask(store, query) == {
            "hits": [],
            "note": "no past session matches these words",
        }
    # a query holding the secret and a plain word finds the plain word only
    found = await ask(store, PASSWORD)
    assert found["hits"]
    assert PASSWORD not in json.dumps(found)
    assert "hunter2" not in json.dumps(found)
    # the same through the function the CLI and the API call
    assert await search_sessions(store, "hunter2") == []
    assert all(PASSWORD not in h.snippet for h in await search_sessions(store, PASSWORD))


async def test_scope_isolation_by_glob_and_by_a_function_of_the_agent(
    stores: Callable[[], Store],
) -> None:
    store = stores()
    await past_session(store, "alice-1", "my invoice number is 4471", "Noted: invoice 4471.")
    await past_session(store, "bob-1", "my invoice number is 9902", "Noted: invoice 9902.")
    await past_session(store, "alicex-1", "invoice draft", "ok")
    mine = await ask(store, "invoice", scope="alice-*")
    assert {h["session_id"] for h in mine["hits"]} == {"alice-1"}
    assert "9902" not in json.dumps(mine)
    by_user = await ask(
        store,
        "invoice",
        scope=lambda agent: agent.session_id.split("-")[0] + "-*",
        session_id="bob-2",
    )
    assert {h["session_id"] for h in by_user["hits"]} == {"bob-1"}
    assert "4471" not in json.dumps(by_user)


async def test_bounds_and_bad_input_are_tool_errors_for_the_model(
    stores: Callable[[], Store],
) -> None:
    store = stores()
    await past_session(store, "long-1", "budget " + "words " * 400, "ok")
    [hit] = (await ask(store, "budget"))["hits"]
    assert len(hit["snippet"]) <= SNIPPET_MAX
    assert hit["snippet"].endswith("…")
    too_long = await ask(store, "x" * 501)
    assert "the search query is 501 characters long; at most 500 are allowed" in too_long
    assert await ask(store, "!!! ??? ---") == {
        "hits": [],
        "note": "no past session matches these words",
    }
    bad_scope = await ask(store, "budget", scope=lambda agent: "")
    assert "the session_search scope function returned '', not a glob" in bad_scope
    many = await ask(store, "ok", limit=1)
    assert len(many["hits"]) == 1


def test_the_tool_is_configured_with_an_explicit_scope() -> None:
    with pytest.raises(TypeError, match="scope"):
        session_search()  # type: ignore[call-arg]
    with pytest.raises(InputError, match="non-empty session-id glob"):
        session_search(scope="")
    with pytest.raises(InputError, match="between 1 and 50"):
        session_search(scope="*", limit=0)
    spec = session_search(scope="*")
    assert spec.name == "session_search"


async def test_a_secret_masked_in_a_sub_agent_is_hidden_in_the_parents_hits(
    stores: Callable[[], Store],
) -> None:
    from secret_tree import SECRET as TREE_SECRET
    from secret_tree import tree

    store = stores()
    await tree(store, "lead-1").invoke_async("log in")
    hits = await search_sessions(store, "welcome alice", limit=50)
    # the lead's answer and tool result quote the password its sub-agent's call masked
    assert "lead-1" in {h.session_id for h in hits}
    assert all(TREE_SECRET not in h.snippet for h in hits)
    assert any("***" in h.snippet for h in hits if h.session_id == "lead-1")
    assert await search_sessions(store, "hunter2", limit=50) == []


async def test_a_deny_policy_stops_the_search_and_the_audit_sees_every_call(
    stores: Callable[[], Store],
) -> None:
    from tether.control import BeforeToolCall, Deny, InterventionHandler

    class NoSearch(InterventionHandler):
        def before_tool_call(self, event: BeforeToolCall) -> Deny | None:
            return Deny("no searching") if event.tool_call.name == "session_search" else None

    store = stores()
    await past_session(store, "p-1", "the quarterly report", "ok")
    denied = searcher(store, "asker-d", "quarterly", scope="*").clone(interventions=[NoSearch()])
    await denied.invoke_async("search")
    [result] = [r for m in denied.messages for r in m.tool_results]
    assert result.status == "denied"
    assert "quarterly report" not in result.content
    allowed = await ask(store, "quarterly", session_id="asker-ok")
    assert [h["session_id"] for h in allowed["hits"]] == ["p-1"]
    for sid, status in (("asker-d", "denied"), ("asker-ok", "ok")):
        records = await store.audit.records(session_id=sid)
        [executed] = [r.data for r in records if r.event == "tool.executed"]
        assert (executed["tool"], executed["status"]) == ("session_search", status)


async def test_a_masked_word_in_the_query_changes_neither_order_nor_rank(
    stores: Callable[[], Store],
) -> None:
    store = stores()
    await secret_session(store, "secret-2")
    await past_session(
        store, "plain-2", "the orchid dashboard is slow", "the orchid dashboard is fine"
    )

    def shown(hits: list[Any]) -> list[tuple[str, int, float, str]]:
        return [(h.session_id, h.seq, h.rank, h.snippet) for h in hits]

    plain = shown(await search_sessions(store, "orchid dashboard", limit=20))
    assert len(plain) == 5
    for guess in ("hunter2", "hunter2 9931", "0a1b2c3d4e5f6789", "wrongguess"):
        assert shown(await search_sessions(store, f"orchid dashboard {guess}", limit=20)) == plain
