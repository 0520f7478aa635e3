"""Per-invocation state shared by the loop, the model step and the tool step."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tether.context.truncated import Truncation
from tether.control.events import AfterMessageAdded
from tether.control.interrupts import Interrupt
from tether.errors import OutputValidationError
from tether.events import MessageCompleted
from tether.messages import ContentBlock, JSONValue, Message, ToolCall, ToolResult
from tether.result import RunUsage, StopReason
from tether.tools.context import CancelSignal

if TYPE_CHECKING:
    from tether.agent_ref import AgentRef
    from tether.context.estimate import Estimator
    from tether.context.step import ContextStep
    from tether.control.middleware import ModelOnion, ToolOnion
    from tether.runtime import Runtime
    from tether.session import SessionJournal
    from tether.structured import OutputSpec
    from tether.tools.channel import Outlet


_INVOCATIONS = itertools.count(1)


class StopRun(Exception):
    """Internal control flow: end the run with ``stop_reason`` (never escapes the loop)."""

    def __init__(self, stop_reason: StopReason, reason: str | None = None) -> None:
        super().__init__(reason or stop_reason)
        self.stop_reason = stop_reason
        self.reason = reason


class RunState:
    """The mutable state of one invocation."""

    __slots__ = (
        "agent",
        "answers",
        "batch_position",
        "blocked",
        "buffered",
        "cancel",
        "clean_history",
        "context",
        "context_step",
        "failover",
        "grace_used",
        "held",
        "interrupts",
        "invalid_calls",
        "invalid_rounds",
        "invocation",
        "journal",
        "last_assistant",
        "loop",
        "messages",
        "model_onion",
        "outlets",
        "output",
        "output_retries",
        "output_spec",
        "paused",
        "pending",
        "runtime",
        "session_id",
        "started",
        "stop_hint",
        "system_prompt",
        "tasks",
        "tool_onion",
        "truncation",
        "usage",
        "watched",
    )

    def __init__(self, agent: AgentRef, cancel: CancelSignal) -> None:
        self.agent = agent
        """The agent this run happens in (what hook events carry)."""
        runtime: Runtime = agent.runtime
        self.runtime = runtime
        """What this run runs with: the engine reads configuration only from here."""
        conversation = agent.conversation
        self.session_id: str = conversation.session_id
        self.messages: list[Message] = conversation.messages
        self.usage = RunUsage()
        self.started = time.monotonic()
        self.cancel = cancel
        self.loop = asyncio.get_running_loop()
        self.tasks: set[asyncio.Task[object]] = set()
        self.invalid_calls = 0
        """Calls of the current batch refused for their arguments (see MAX_INVALID_TOOL_ROUNDS)."""
        self.invalid_rounds = 0
        self.grace_used = False
        self.last_assistant: Message | None = None
        self.stop_hint: tuple[StopReason, str] | None = None
        self.pending: tuple[Sequence[ToolCall], list[ToolResult | None]] | None = None
        """The tool calls of the last assistant message and their results so far."""
        self.batch_position = 0
        """Index of the assistant message whose tool calls run now (part of interrupt ids)."""
        self.answers: dict[str, JSONValue] = conversation.answers
        self.interrupts: list[Interrupt] = []
        self.held: dict[str, list[Interrupt]] = {}
        """Calls of a resumed batch that wait for answers (targeted resume): call id ->
        its pending interrupts. They do not run; their interrupts stay pending."""
        self.paused = False
        self.blocked: str | None = None
        """Why a hook stopped the run at the tool seam (``block``): it ends ``blocked``
        once the current batch has settled; calls not started by then do not run."""
        self.invocation = next(_INVOCATIONS)
        self.journal: SessionJournal | None = None
        self.context_step: ContextStep | None = None
        """This run's context step (tether.context.step), made at its first model call."""
        self.context: Estimator | None = None
        """The running token estimate of the next request (tether.context.step)."""
        self.system_prompt: str | None = conversation.system_prompt
        """The system prompt this run sends (the session's, see tether.context.prompt)."""
        self.clean_history = False
        """Send a cleaned history (set after the provider rejected one as malformed)."""
        self.truncation = Truncation()
        """Replies cut off at the output limit (tether.context.truncated)."""
        self.buffered: bool = runtime.buffer_output
        """Hold model text/reasoning deltas until the post_model_call and output verdicts."""
        self.output_spec: OutputSpec | None = conversation.output_spec
        self.output: object = None
        """The validated structured output (with an output type, once the run answered)."""
        self.output_retries = 0
        self.outlets: dict[asyncio.Task[Any], Outlet] | None = None
        """While a tool group that may emit events runs: each call's task -> its way into
        the stream (tools/channel.py); None otherwise."""
        self.watched = True
        """Someone reads this run's stream events as they come (``agent.stream``, or an
        observer): tools that may emit run with a live channel (tools/channel.py)."""
        self.failover: dict[str, list[dict[str, object]]] | None = None
        """Provider retries and fallbacks of the current model call (journaled runs only,
        see tether.failover): journaled with the assistant message that answers it."""
        self.model_onion: ModelOnion | None = None
        """The model middleware chain of this run, or None (no model middleware)."""
        self.tool_onion: ToolOnion | None = None
        if runtime.model_middleware or runtime.tool_middleware:
            from tether.toolcall import onions

            onions(self)

    def cancel_tasks(self) -> None:
        """Cancel the tasks running tool calls (called on the loop thread)."""
        for task in list(self.tasks):
            task.cancel()

    def check_output(self, message: Message) -> Message | OutputValidationError | None:
        """Check the run's final answer: set ``output`` and return None when it is valid,
        else the feedback message for another try, or past the bound the error to raise
        (after the loop keeps the answer in the history)."""
        spec = self.output_spec
        assert spec is not None
        checked = spec.check(message.text)
        if checked.error is None:
            self.output = checked.value
            return None
        if self.output_retries >= spec.retries:
            return OutputValidationError(
                f"{checked.error} (after {spec.retries} retr{'y' if spec.retries == 1 else 'ies'}; "
                "the model did not produce a valid answer)"
            )
        self.output_retries += 1
        return Message.user(
            f"[tether] Your final answer is not valid: {checked.error}. Reply again with only "
            f"the JSON value."
        )

    async def add_message(self, message: Message) -> MessageCompleted:
        """Append ``message`` to the conversation and notify AfterMessageAdded hooks."""
        self.messages.append(message)
        if message.role == "assistant":
            self.last_assistant = message
        if self.journal is not None:
            if self.failover is not None and message.role == "assistant":
                failover, self.failover = self.failover, None
                await self.journal.message(message, failover)
            else:
                await self.journal.message(message)
        hooks = self.runtime.hooks
        if hooks.has(AfterMessageAdded):
            await hooks.emit(AfterMessageAdded(self.agent, message))
        return MessageCompleted(message)

    def close_open_calls(self, status: str, reason: str) -> Message | None:
        """The tool message that answers every pending call (missing results become errors).

        Returns None when no call is pending. The caller appends the message, so
        the history stays valid (every tool call has a result) whatever stopped the run.
        """
        if self.pending is None:
            return None
        calls, results = self.pending
        self.pending = None
        content: list[ContentBlock] = [
            result
            if result is not None
            else ToolResult(call.id, call.name, f"Not run: {reason}", is_error=True, status=status)
            for call, result in zip(calls, results, strict=True)
        ]
        return Message("tool", content)
