"""Microsoft Agent Framework + AGENT-HOOKS runner (bench/.venvs/maf/bin/python).

Setup: the MAF row's agent (`maf_overhead.FakeChatClient`, `@tool async def
add`) with `middleware=[agent_framework.create_agent_hooks_middleware(
[CountingAllowAll()])]` instead of the two no-op middleware: MAF's own
AGENT-HOOKS-0.1 middleware bundle (agent_framework/_agent_hooks.py in
agent-framework-core 1.23.0) over the same agent-hooks-sdk emitter, with its
defaults (enforce, jcs-sha256, sequential/first_deny, one session per run,
buffered output). Stateless runs, as the MAF row.
"""

from __future__ import annotations

from importlib.metadata import version

from _harness import PROMPT, Subject, main
from _hooks_interceptor import CountingAllowAll
from agent_framework import Agent, AgentResponse, create_agent_hooks_middleware
from maf_overhead import FakeChatClient, add


async def build(variant: str) -> Subject:
    if variant:
        raise SystemExit(f"unknown variant {variant!r}")
    bundle = create_agent_hooks_middleware([CountingAllowAll()])
    agent = Agent(client=FakeChatClient(), tools=[add], middleware=[bundle])

    def text_of(response: AgentResponse) -> str:
        assert response.finish_reason in (None, "stop"), response.finish_reason
        return response.text

    return Subject(
        name="MAF + AGENT-HOOKS",
        version=(
            f"agent-framework-core {version('agent-framework-core')}, "
            f"agent-hooks-sdk {version('agent-hooks-sdk')}"
        ),
        invoke=lambda: agent.run(PROMPT),
        reset=lambda: None,
        text_of=text_of,
        setup="agent_framework.Agent(middleware=[create_agent_hooks_middleware([allow-all])])",
    )


if __name__ == "__main__":
    main(build)
