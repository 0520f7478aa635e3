"""The session's system prompt: journaled, reused on resume, changed only in the open."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from tether.context.memory_block import with_memory

if TYPE_CHECKING:
    from tether.run_state import RunState

log = logging.getLogger("tether.context")


def settle_system_prompt(run: RunState, *, resumed: bool, memory: str | None = None) -> None:
    """Decide the system prompt this run sends and journal it when it is new or changed.

    The session keeps the prompt it was started with, so every run of it sends a
    byte-identical prefix (what provider prompt caches need):

    - an Agent built with ``system_prompt=None`` uses the session's prompt;
    - ``resume()`` always continues with the session's prompt;
    - a new invocation with a different ``system_prompt`` changes it, and the
      change is journaled (a ``system_prompt`` entry) so later runs follow it.

    ``memory``: the memory tools' frozen blocks (``context/memory_block.py``), sent after
    the configured prompt; they are fixed for the session, so they change nothing above.
    """
    agent = run.agent
    conversation = agent.conversation
    configured = with_memory(run.runtime.system_prompt, memory)
    if conversation.system_prompt_known and (
        configured is None or resumed or configured == conversation.system_prompt
    ):
        run.system_prompt = conversation.system_prompt
        return
    if not conversation.system_prompt_known and configured is None:
        run.system_prompt = None  # nothing to keep yet: a later prompt is the first one
        return
    if conversation.system_prompt_known:
        log.info("session %s: system prompt changed by the agent's configuration", agent.session_id)
    conversation.system_prompt = configured
    conversation.system_prompt_known = True
    run.system_prompt = configured
    if run.journal is not None:
        run.journal.defer("system_prompt", {"system_prompt": configured})
