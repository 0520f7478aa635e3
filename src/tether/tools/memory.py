"""The built-in ``memory`` tool: long-term memory the agent reads and writes across sessions.

Entries are short texts in a *scope* (a string, or a function of the session state such
as ``lambda state: f"user:{state['user_id']}"``), kept by a
:class:`~tether.tools.memory_provider.MemoryProvider` (the agent's store by default).
At a session's start the scope's entries go into the system prompt as one frozen block
(``tether/context/memory_block.py``); the tool's ``list`` shows later writes at once.
A write is an ordinary tool call (policies, hooks, Confirm and ``tool.executed`` see
it) and adds a ``memory.written`` audit record with its scope and entry id. Text that
looks like a secret (tether's redaction rule, :func:`~tether.governance.masks.redact_text`)
is refused, and so is text holding the frozen block's markers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

from tether.durable.memory_entries import MemoryCaps, MemoryEntry, Usage, Written, check_scope
from tether.errors import ConfigurationError, InputError, SessionStateError, ToolArgumentError
from tether.tools.base import Tool
from tether.tools.context import ToolContext
from tether.tools.memory_provider import MemoryProvider, provider_for
from tether.tools.todo import shown

if TYPE_CHECKING:
    from tether.durable.store import Store

MEMORY = "memory"
MEMORY_KEY = "__tether_memory__"
"""Session-state key holding each memory tool's frozen scope and block, by tool name."""
BLOCK_START = "<tether-memory>"
BLOCK_END = "</tether-memory>"
"""The frozen block's markers (text holding them is refused, and stripped from user input)."""
DEFAULT_CAPS = MemoryCaps()
"""50 entries of at most 1,000 characters, 5,000 characters in all, per scope."""

Scope = str | Callable[[dict[str, Any]], str]
Action = Literal["add", "replace", "remove", "list"]


class MemoryTool(Tool):
    """See the module docstring; build it with :func:`memory`."""

    scope: Scope
    provider: MemoryProvider | None
    caps: MemoryCaps

    def scope_in(self, state: dict[str, Any]) -> str:
        """The scope of the session whose state is ``state``: the one frozen at its start,
        else the configured one (a function is called with the state)."""
        frozen = frozen_of(state).get(self.name)
        if isinstance(frozen, dict) and isinstance(frozen.get("scope"), str):
            return str(frozen["scope"])
        if callable(self.scope):
            try:
                scope = self.scope(state)
            except Exception as exc:
                raise ConfigurationError(
                    f"tool {self.name!r}: memory(scope=...) raised {type(exc).__name__}: {exc}"
                ) from exc
        else:
            scope = self.scope
        try:
            return check_scope(scope)
        except InputError as exc:
            raise ConfigurationError(
                f"tool {self.name!r}: memory(scope=...) gave no usable scope: {exc}"
            ) from None

    def provider_of(self, store: Store | None) -> MemoryProvider:
        """Where this tool's entries are: its provider, else the agent's store."""
        return provider_for(self.provider, store, self.name)


def memory(
    scope: Scope,
    *,
    provider: MemoryProvider | None = None,
    caps: MemoryCaps = DEFAULT_CAPS,
    name: str = MEMORY,
) -> MemoryTool:
    """The opt-in ``memory`` tool (``Agent(tools=[..., memory(scope="user:42")])``): one
    tool whose ``action`` adds, replaces, removes or lists the scope's entries.
    ``scope``: a str, or a function of the session state returning one (called once per
    session, at its start). ``provider``: where entries live (default: the agent's store).
    ``caps``: how much a scope holds (:data:`DEFAULT_CAPS`)."""
    if not (isinstance(scope, str) or callable(scope)):
        raise ConfigurationError(
            f"memory(scope=...) takes a str or a function of the session state, got "
            f"{type(scope).__name__}"
        )
    if isinstance(scope, str):
        try:
            check_scope(scope)
        except InputError as exc:
            raise ConfigurationError(f"memory(scope=...): {exc}") from None
    if provider is not None and not isinstance(provider, MemoryProvider):
        raise ConfigurationError(
            "memory(provider=...) takes a MemoryProvider (async entries, add, replace, "
            f"remove), got {type(provider).__name__}"
        )
    if not isinstance(caps, MemoryCaps):
        raise ConfigurationError(f"memory(caps=...) takes a MemoryCaps, got {type(caps).__name__}")

    async def run(
        context: ToolContext,
        action: Action,
        text: str | None = None,
        id: str | None = None,
    ) -> str:
        """Long-term memory kept across sessions: durable facts worth remembering next
        time (the user's preferences, decisions, names). What was saved before this
        session began is in the system prompt; list shows the current entries. Never
        store secrets (keys, tokens, passwords): they are refused.

        Args:
            action: add (save `text` as a new entry), replace (set the text of entry `id`
                to `text`), remove (delete entry `id`), or list.
            text: For add and replace: the entry, one short fact.
            id: For replace and remove: the entry's id, as list shows it.
        """
        scope = tool.scope_in(context.state)
        where = tool.provider_of(context.agent.runtime.store)
        if action == "list":
            entries = bounded(await where.entries(scope), tool.caps)
            return render(scope, entries, _usage(entries), tool.caps)
        if action == "remove":
            entry_id = _id(id, "remove")
            removed = await where.remove(scope, entry_id)
            if removed is None:
                raise ToolArgumentError(await _no_such(where, scope, entry_id))
            await _audit(context, scope, entry_id, "remove")
            entries = bounded(await where.entries(scope), tool.caps)
            return f"Removed entry {entry_id}.\n" + render(
                scope, entries, _usage(entries), tool.caps
            )
        checked = _text(text, action, tool.caps)
        if action == "add":
            written = await where.add(scope, checked, tool.caps)
        else:
            entry_id = _id(id, "replace")
            written = await where.replace(scope, entry_id, checked, tool.caps)
            if written.missing:
                raise ToolArgumentError(await _no_such(where, scope, entry_id))
        entry = _written(written, action, scope, checked, tool.caps)
        await _audit(context, scope, entry.id, action)
        verb = "Added" if action == "add" else "Replaced"
        return f"{verb} entry {entry.id}. " + room(written.usage, tool.caps)

    tool = MemoryTool(run, name=name)
    tool.scope = scope
    tool.provider = provider
    tool.caps = caps
    return tool


def frozen_of(state: dict[str, Any]) -> dict[str, Any]:
    """The frozen scopes and blocks in ``state`` (empty when none); SessionStateError when
    the key holds something else (nothing is overwritten)."""
    value = state.get(MEMORY_KEY)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise SessionStateError(
            f"the session state's {MEMORY_KEY!r} is a {type(value).__name__}, not a dict; it "
            f"was left as it is: remove or fix agent.state[{MEMORY_KEY!r}]"
        )
    return value


def bounded(entries: list[MemoryEntry], caps: MemoryCaps) -> list[MemoryEntry]:
    """At most ``caps.entries`` entries of at most ``caps.entry_chars`` characters (what a
    provider returns is untrusted)."""
    return [
        e if len(e.text) <= caps.entry_chars else replace(e, text=e.text[: caps.entry_chars])
        for e in entries[: caps.entries]
        if isinstance(e, MemoryEntry)
    ]


def render(scope: str, entries: list[MemoryEntry], usage: Usage, caps: MemoryCaps) -> str:
    """The scope's entries as the tool's ``list`` result."""
    head = f"Memory of scope {scope!r}"
    if not entries:
        return f"{head} is empty. {room(usage, caps)}"
    return "\n".join([f"{head}: {room(usage, caps)}", *(line(e) for e in entries)])


def line(entry: MemoryEntry) -> str:
    """One entry on one line (hidden characters and block markers gone)."""
    text = shown(entry.text, limit=None).replace(BLOCK_START, "").replace(BLOCK_END, "")
    return f"- [{shown(entry.id, limit=40)}] {text}"


def room(usage: Usage, caps: MemoryCaps) -> str:
    """How full a scope is and how much room is left."""
    return (
        f"{usage.entries} of {caps.entries} entries, {usage.chars} of {caps.total_chars} "
        f"characters used: room for {max(0, caps.entries - usage.entries)} more entries and "
        f"{max(0, caps.total_chars - usage.chars)} more characters."
    )


def _usage(entries: list[MemoryEntry]) -> Usage:
    return Usage(len(entries), sum(len(e.text) for e in entries))


def _id(given: str | None, action: str) -> str:
    if given is None or not str(given).strip():
        raise ToolArgumentError(f"memory {action} needs `id`: an entry's id, as list shows it")
    return str(given).strip()[:40]


def _text(given: str | None, action: str, caps: MemoryCaps) -> str:
    from tether.governance.masks import redact_text

    text = (given or "").strip()
    if not text:
        raise ToolArgumentError(f"memory {action} needs `text`: the entry, one short fact")
    if len(text) > caps.entry_chars:
        raise ToolArgumentError(
            f"memory: the entry has {len(text)} characters, {len(text) - caps.entry_chars} "
            f"over the {caps.entry_chars} an entry holds; nothing was saved"
        )
    if BLOCK_START in text or BLOCK_END in text:
        raise ToolArgumentError(
            f"memory: an entry cannot hold {BLOCK_START} or {BLOCK_END} (the markers of the "
            "memory block in the system prompt); nothing was saved"
        )
    if redact_text(text) != text:
        raise ToolArgumentError(
            "memory: the entry looks like it holds a secret (an API key, token or password, "
            "as tether's redaction rule finds them), and secrets are never kept in memory; "
            "nothing was saved. Save where the secret is kept instead, not its value."
        )
    return text


def _written(written: Written, action: str, scope: str, text: str, caps: MemoryCaps) -> MemoryEntry:
    if written.entry is not None:
        return written.entry
    usage = written.usage
    if action == "add" and usage.entries >= caps.entries:
        why = f"scope {scope!r} holds {usage.entries} entries, the most it holds"
    else:
        why = f"the entry's {len(text)} characters do not fit"
    raise ToolArgumentError(
        f"memory: {why}; nothing was saved. {room(usage, caps)} Replace or remove an entry "
        "to make room (list shows them)."
    )


async def _no_such(where: MemoryProvider, scope: str, entry_id: str) -> str:
    ids = ", ".join(e.id for e in await where.entries(scope)) or "none: the scope is empty"
    return f"memory: no entry has id {shown(entry_id, limit=40)!r}; the ids are {ids}"


async def _audit(context: ToolContext, scope: str, entry_id: str, action: str) -> None:
    audit = context.agent.runtime.audit
    if audit is not None:
        data = {"scope": scope, "entry_id": entry_id, "action": action}
        await audit.note("memory.written", {**data, "tool": context.tool_call.name})
