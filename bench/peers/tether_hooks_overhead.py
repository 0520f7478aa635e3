"""tether + AGENT-HOOKS runner (the project's .venv python, with agent-hooks-sdk).

Setup: `tether.Agent(model=ScriptedModel(script), tools=[add],
agent_hooks=[CountingAllowAll()])`: one allow-all interceptor through the
agent-hooks-sdk emitter at all eight points (10 emissions per invocation),
jcs-sha256 identities, enforce mode, buffered output (on with interceptors).
No other hooks: the interceptor counts the three callback points.
Fresh conversation: `agent.reset()`; each invocation is one AGENT-HOOKS session.
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

from _harness import PROMPT, Subject, main
from _hooks_interceptor import CountingAllowAll
from tether_overhead import add, script

from tether import Agent
from tether.models import ScriptedModel


async def build(variant: str) -> Subject:
    if variant:
        raise SystemExit(f"unknown variant {variant!r}")
    agent = Agent(model=ScriptedModel(script), tools=[add], agent_hooks=[CountingAllowAll()])

    def text_of(result: Any) -> str:
        assert result.stop_reason == "end_turn", (result.stop_reason, result.reason)
        return str(result.text)

    return Subject(
        name="tether + AGENT-HOOKS",
        version=f"tether {version('tether')}, agent-hooks-sdk {version('agent-hooks-sdk')}",
        invoke=lambda: agent.invoke_async(PROMPT),
        reset=agent.reset,
        text_of=text_of,
        setup="tether.Agent(agent_hooks=[one allow-all]) + ScriptedModel, @tool async def add",
    )


if __name__ == "__main__":
    main(build)
