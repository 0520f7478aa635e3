"""The app the A2A tests serve: ``tether serve --app a2a_app:agent_factory``.

Environment: ``TETHER_A2A_STORE`` (store URL), ``TETHER_A2A_OUT`` (``append_line``
appends one line per real execution). The scripted model reads the task's first words:

* ``hello ...`` - replies at once;
* ``append TEXT`` - calls ``append_line(TEXT)``, which asks for approval (a Confirm);
* ``ask`` - calls ``clarify("which colour?")`` and replies with the answer;
* ``sleep [N]`` - calls ``nap(seconds=N)`` (default 30: a task to cancel);
* ``delegate TEXT`` - calls the sub-agent ``helper``, whose ``append_line`` asks for
  approval deep in the tree (the interrupt carries its path);
* ``secret`` - appends a line with an api key, then repeats the key in its reply (the key
  is redacted in every view).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from tether import Agent, tool
from tether.agents import as_tool
from tether.control import BeforeToolCall, Confirm, InterventionHandler
from tether.durable import Store
from tether.models import ScriptedModel
from tether.ops.store_url import open_store
from tether.tools import clarify

_STORES: dict[str, Store] = {}


class ConfirmAppends(InterventionHandler):
    name = "confirm-appends"

    def before_tool_call(self, event: BeforeToolCall) -> Confirm | None:
        if event.tool_call.name == "append_line":
            return Confirm(f"append {event.tool_call.arguments.get('text')!r}?")
        return None


def _first_text(messages: list[Any]) -> str:
    return next((m.text for m in messages if m.role == "user"), "")


def _last_result(messages: list[Any]) -> str:
    return " + ".join(r.content for r in messages[-1].tool_results)


def script(messages: list[Any], tools: list[dict[str, Any]]) -> Any:
    words = _first_text(messages).split(maxsplit=1)
    verb, rest = (words[0] if words else ""), (words[1] if len(words) > 1 else "")
    if messages[-1].role == "tool" and verb == "secret":  # the model repeats the secret
        return "done with sk-live-0123456789abcdef0123"
    if messages[-1].role == "tool":
        return f"done: {_last_result(messages)}"
    if verb == "append":
        return {"tool_calls": [{"id": "c1", "name": "append_line", "args": {"text": rest}}]}
    if verb == "secret":
        args = {"text": "key", "api_key": "sk-live-0123456789abcdef0123"}
        return {"tool_calls": [{"id": "c1", "name": "append_line", "args": args}]}
    if verb == "ask":
        return {
            "tool_calls": [{"id": "c1", "name": "clarify", "args": {"question": "which colour?"}}]
        }
    if verb == "sleep":
        seconds = float(rest) if rest else 30.0
        return {"tool_calls": [{"id": "c1", "name": "nap", "args": {"seconds": seconds}}]}
    if verb == "delegate":
        return {"tool_calls": [{"id": "d1", "name": "helper", "args": {"task": rest}}]}
    return f"hi: {_first_text(messages)}"


def helper_script(messages: list[Any], tools: list[dict[str, Any]]) -> Any:
    if messages[-1].role == "tool":
        return f"helper done: {_last_result(messages)}"
    return {
        "tool_calls": [{"id": "h1", "name": "append_line", "args": {"text": _first_text(messages)}}]
    }


def agent_factory(session_id: str, store: Store | None = None) -> Agent:
    if store is None:
        url = os.environ["TETHER_A2A_STORE"]
        store = _STORES.get(url) or _STORES.setdefault(url, open_store(url))
    out = Path(os.environ.get("TETHER_A2A_OUT", os.devnull))

    @tool
    def append_line(text: str, api_key: str = "") -> str:
        """Append a line to the output file (not idempotent).

        Args:
            text: The line.
            api_key: A credential the line is written with (never shown).
        """
        with out.open("a", encoding="utf-8") as f:
            f.write(text + "\n")
        return f"appended {text}"

    @tool
    async def nap(seconds: float) -> str:
        """Sleep a while.

        Args:
            seconds: How long.
        """
        await asyncio.sleep(seconds)
        return "rested"

    def helper() -> Agent:
        return Agent(model=ScriptedModel(helper_script), tools=[append_line])

    return Agent(
        model=ScriptedModel(script),
        tools=[append_line, nap, clarify(), as_tool(helper, name="helper")],
        interventions=[ConfirmAppends()],
        system_prompt="A test agent that appends lines to a file.",
        store=store,
        session_id=session_id,
        name="appender",
    )
