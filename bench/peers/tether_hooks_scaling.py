"""tether + AGENT-HOOKS at a fixed history, for bench/peers/_hooks_profile.py (project .venv).

bench/scaling.py's `hooks` row times the same agent as its history grows; this
module gives the profiler the same agent at a FIXED history of n messages:
`Agent(model=FlatModel(), tools=[add], agent_hooks=[CountingAllowAll()])` (the
O(1) model and the history turns of bench/scaling.py), reset before each
invocation to the same n message objects (`agent.messages = list(history)`).
Without `hooks` it is the same agent with no AGENT-HOOKS host (the share of the
loop and the context step at that history, to subtract).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from _harness import PROMPT
from _hooks_interceptor import CountingAllowAll

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from scaling import FlatModel, add, history
from tether import Agent


def make_agent(hooks: bool = True) -> Agent:
    return Agent(
        model=FlatModel(), tools=[add], agent_hooks=[CountingAllowAll()] if hooks else None
    )


def seeded(n: int, hooks: bool = True) -> tuple[Any, Any]:
    """(invoke, reset) on one agent whose conversation is reset to the same n messages."""
    agent = make_agent(hooks)
    messages = history(n)

    def reset() -> None:
        agent.messages = list(messages)

    reset()
    return (lambda: agent.invoke_async(PROMPT)), reset
