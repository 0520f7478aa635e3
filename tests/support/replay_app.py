"""Agents for the replay tests (``--app replay_app:...``): scripted from the prompt, with a
tool that appends to a file (so a run that executes it is seen), a Confirm before sending,
and variants that diverge (another model, a new Deny rule).

The file is ``$TETHER_TEST_REPLAY_LOG``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tether import Agent, tool
from tether.control import ApprovalPolicy, BeforeToolCall, Confirm, Deny, InterventionHandler
from tether.messages import Message
from tether.models import ScriptedModel

LOG_ENV = "TETHER_TEST_REPLAY_LOG"


@tool
def append(line: str) -> str:
    """Append a line to the log."""
    with Path(os.environ[LOG_ENV]).open("a", encoding="utf-8") as log:
        log.write(line + "\n")
    return f"appended {line}"


@tool
def send(to: str) -> str:
    """Send a message (asked first)."""
    with Path(os.environ[LOG_ENV]).open("a", encoding="utf-8") as log:
        log.write(f"sent to {to}\n")
    return f"sent to {to}"


@tool
def count(n: int) -> str:
    """Count to n."""
    with Path(os.environ[LOG_ENV]).open("a", encoding="utf-8") as log:
        log.write(f"counted {n}\n")
    return f"counted to {n}"


@tool
def login(user: str, password: str) -> str:
    """Log in."""
    return f"logged in as {user}"


TOOLS = [append, send, count, login]


def _prompt(messages: list[Message]) -> str:
    return next(m.text for m in reversed(messages) if m.role == "user" and m.text)


def _script(shout: bool) -> Any:
    def script(messages: list[Message], _specs: list[dict[str, Any]]) -> Any:
        """``note X`` appends X (``shout``: X upper-cased), ``send X`` sends to X, ``count N``
        counts to the string N, ``login U P`` logs in; after a tool result: ``done: <it>``."""
        if messages[-1].role == "tool":
            return f"done: {messages[-1].tool_results[0].content}"
        verb, _, rest = _prompt(messages).partition(" ")
        if verb == "note":
            return {
                "tool_calls": [
                    {"name": "append", "args": {"line": rest.upper() if shout else rest}}
                ]
            }
        if verb == "send":
            return {"tool_calls": [{"name": "send", "args": {"to": rest}}]}
        if verb == "count":
            return {
                "tool_calls": [{"name": "count", "args": {"n": rest if not shout else int(rest)}}]
            }
        if verb == "login":
            user, _, password = rest.partition(" ")
            user = user.upper() if shout else user
            return {"tool_calls": [{"name": "login", "args": {"user": user, "password": password}}]}
        return f"echo: {_prompt(messages)}"

    return script


class AskBeforeSend(InterventionHandler):
    """Ask before sending."""

    def before_tool_call(self, event: BeforeToolCall) -> Any:
        if event.tool_call.name == "send":
            return Confirm("send it?")
        return None


class NoAppend(InterventionHandler):
    """The new rule: nothing is appended."""

    def before_tool_call(self, event: BeforeToolCall) -> Any:
        if event.tool_call.name == "append":
            return Deny("appending is not allowed")
        return None


def make_agent(**options: Any) -> Agent:
    """The recorded agent."""
    options.setdefault("store", None)
    return Agent(model=ScriptedModel(_script(False)), tools=TOOLS,
                 interventions=[AskBeforeSend()], **options)  # fmt: skip


def loud(**options: Any) -> Agent:
    """Another model: it upper-cases what it notes (a different call)."""
    options.setdefault("store", None)
    return Agent(model=ScriptedModel(_script(True)), tools=TOOLS,
                 interventions=[AskBeforeSend()], **options)  # fmt: skip


def no_append(**options: Any) -> Agent:
    """The recorded agent under a new Deny rule."""
    options.setdefault("store", None)
    return Agent(model=ScriptedModel(_script(False)), tools=TOOLS,
                 interventions=[AskBeforeSend(), NoAppend()], **options)  # fmt: skip


def hide_user(tool_name: str | None, args: dict[str, Any]) -> dict[str, Any]:
    """A custom redactor: who logs in is not shown."""
    return {**args, "user": "***"} if tool_name == "login" else args


def redacting_loud(**options: Any) -> Agent:
    """``loud`` with a custom redactor that hides the login's user."""
    options.setdefault("store", None)
    return Agent(model=ScriptedModel(_script(True)), tools=TOOLS, interventions=[AskBeforeSend()],
                 approvals=ApprovalPolicy(redactor=hide_user), **options)  # fmt: skip


def not_an_agent(session_id: str | None = None) -> Any:
    return {"model": "scripted"}


def broken(session_id: str | None = None) -> Agent:
    raise RuntimeError("no configuration for \x1b[31mprod")
