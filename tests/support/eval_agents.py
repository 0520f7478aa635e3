"""Agents for the evals tests: scripted from the prompt, so any order of runs gives the
same answers."""

from __future__ import annotations

from typing import Any

from tether import Agent, tool
from tether.control import BeforeToolCall, Confirm, Deny, InterventionHandler, Proceed
from tether.messages import Message


@tool
def search(query: str, limit: int = 5) -> str:
    """Search for something."""
    return f"results for {query} (at most {limit})"


@tool
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


@tool
def send(to: str) -> str:
    """Send a message."""
    return f"sent to {to}"


def prompt_of(messages: list[Message]) -> str:
    return next(m.text for m in messages if m.role == "user")


def script(messages: list[Message], _specs: list[dict[str, Any]]) -> Any:
    """``search X``: search for X, then answer; ``delete X``: try to delete X; ``send X``:
    send to X (a Confirm asks first); ``boom``: a tool the model made up; else echo."""
    prompt = prompt_of(messages)
    verb, _, rest = prompt.partition(" ")
    done = any(m.role == "tool" for m in messages)
    if verb == "search" and not done:
        return {"tool_calls": [{"name": "search", "args": {"query": rest}}]}
    if verb == "delete" and not done:
        return {"tool_calls": [{"name": "delete_file", "args": {"path": rest}}]}
    if verb == "send" and not done:
        return {"tool_calls": [{"name": "send", "args": {"to": rest}}]}
    if done:
        last = next(m for m in reversed(messages) if m.role == "tool")
        return f"done: {last.tool_results[0].content}"
    return f"echo: {prompt}"


class Policy(InterventionHandler):
    """Deny deletes; ask before sending."""

    def before_tool_call(self, event: BeforeToolCall) -> Any:
        if event.tool_call.name == "delete_file":
            return Deny("deletes are not allowed")
        if event.tool_call.name == "send":
            return Confirm("send it?")
        return Proceed()


def factory(**options: Any) -> Agent:
    from tether.models import ScriptedModel

    options.setdefault("store", None)
    return Agent(
        model=ScriptedModel(script),
        tools=[search, delete_file, send],
        interventions=[Policy()],
        **options,
    )


def scored(evaluator: Any, case: Any, make: Any = None, **options: Any) -> Any:
    """The Score ``evaluator`` gives one real run of ``case`` (default agent: factory)."""
    from tether.evals import Dataset

    report = Dataset([case], [evaluator]).evaluate(make or factory, **options)
    (row,) = report.rows
    return row.scores[evaluator.name]


def answering(*texts: Any, **options: Any) -> Any:
    """A factory of agents whose ScriptedModel plays ``texts`` (turns)."""
    from tether.models import ScriptedModel

    def make() -> Agent:
        return Agent(model=ScriptedModel(list(texts)), tools=[search, delete_file, send],
                     store=None, **options)  # fmt: skip

    return make
