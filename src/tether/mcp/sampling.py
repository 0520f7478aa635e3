"""Answer a server's sampling requests (``sampling/createMessage``) with a tether Agent.

Refused unless the MCPServer was given ``sampling=Agent(...)``: that agent's hooks,
interventions, limits and audit apply to every request, as to its own model calls.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from tether.errors import TetherError
from tether.messages import Message, TextBlock

if TYPE_CHECKING:
    import mcp_types

    from tether.agent_ref import AgentRef
    from tether.running import Running
    from tether.runtime import Runtime


class SamplingAnswerer:
    """Runs one invocation of ``agent`` per request, one request at a time."""

    def __init__(self, agent: AgentRef, label: str) -> None:
        self.agent = agent
        self.label = label
        self._locks: dict[asyncio.AbstractEventLoop, asyncio.Lock] = {}  # per connection loop
        self.answered = 0

    async def __call__(
        self, context: Any, params: mcp_types.CreateMessageRequestParams
    ) -> mcp_types.CreateMessageResult | mcp_types.ErrorData:
        from mcp_types import INVALID_REQUEST, CreateMessageResult, ErrorData, TextContent

        messages: list[Message] = []
        for message in params.messages:
            blocks = message.content if isinstance(message.content, list) else [message.content]
            texts = [getattr(b, "text", None) for b in blocks]
            if any(not isinstance(t, str) for t in texts):
                return ErrorData(
                    code=INVALID_REQUEST,
                    message="tether answers sampling requests made of text only",
                )
            messages.append(Message(message.role, [TextBlock(str(t)) for t in texts]))
        loop = asyncio.get_running_loop()
        lock = self._locks.get(loop)
        if lock is None:
            self._locks = {k: v for k, v in self._locks.items() if not k.is_closed()}
            lock = self._locks[loop] = asyncio.Lock()
        runtime = self.agent.runtime
        if (
            params.system_prompt
        ):  # this request's prompt: a runtime of its own, the agent's unchanged
            runtime = runtime.replace(system_prompt=params.system_prompt)
        async with lock:
            try:
                result = await _fresh_run(runtime).invoke_async(messages)
            except TetherError as exc:
                return ErrorData(code=INVALID_REQUEST, message=f"sampling failed: {exc}")
        if result.stop_reason != "end_turn":
            why = f": {result.reason}" if result.reason else ""
            return ErrorData(
                code=INVALID_REQUEST,
                message=f"sampling was not answered (stop reason {result.stop_reason}{why})",
            )
        self.answered += 1
        return CreateMessageResult(
            role="assistant",
            content=TextContent(type="text", text=result.text),
            model=runtime.model.name,
            stop_reason="endTurn",
        )


def _fresh_run(runtime: Runtime) -> Running:
    """``runtime`` on a new conversation (each request is a session of its own)."""
    import os

    from tether.conversation import Conversation
    from tether.running import Running

    conversation = Conversation(os.urandom(16).hex())
    if runtime.store is None:
        conversation.synced_version = 0
    return Running(runtime, conversation)
