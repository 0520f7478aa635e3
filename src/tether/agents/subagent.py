"""SubAgentTool: an Agent (or an agent factory) as a tool of another agent.

Each call runs a child in its own session, derived from the parent's session id and
the call (see ``addresses.py``), under the parent's policy and store (``inherit.py``).
The call is idempotent by construction: run again (a resume, a crash recovery) it
continues that child session where it stopped, or returns its saved answer; it never
starts the child's work over.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing
from typing import TYPE_CHECKING, Any, cast

from tether.agents.addresses import child_session_id, lift, lifted_id, step
from tether.control.interrupts import InterruptSignal
from tether.durable.claims import SUB_SESSION_KEY
from tether.errors import AgentBusyError, ConfigurationError, SubAgentError
from tether.events import FinalResult, InterruptRaised, StreamEvent, SubAgentEvent
from tether.inheritance import check_child
from tether.messages import JSONValue
from tether.tools.base import Tool
from tether.tools.context import ToolContext

if TYPE_CHECKING:
    from tether.agent import Agent
    from tether.agent_ref import AgentRef
    from tether.journal_fold import SessionView
    from tether.result import Result, StopReason
    from tether.running import Running
    from tether.runtime import Runtime

AgentFactory = Callable[[], "Agent"]
"""Builds a fresh child Agent per call (built with ``store=None``: it uses the parent's)."""


class SubAgentTool(Tool):
    """A tool whose call runs a child agent on the argument ``task`` and returns its
    final text, or its structured output (JSON) when ``output_type`` is given.

    ``source`` is an Agent (its calls run one at a time, each in a fresh conversation)
    or a factory returning a fresh Agent per call (calls may run in parallel when
    ``parallel=True``).
    """

    _instance: Agent | None
    _factory: AgentFactory | None

    def __init__(
        self,
        source: Agent | AgentFactory,
        *,
        name: str,
        description: str | None = None,
        parallel: bool = False,
        output_type: Any = None,
    ) -> None:
        from tether.agent import Agent

        self._init_state(output_type)
        if isinstance(source, Agent):
            check_child(source.runtime, name)
            if parallel:
                raise ConfigurationError(
                    f"sub-agent tool {name!r}: parallel=True needs an agent factory (a "
                    "function returning a fresh Agent), not one Agent object, which runs "
                    "one call at a time"
                )
            self._instance = source
        elif callable(source):
            self._factory = source
        else:
            raise ConfigurationError(
                f"as_tool takes an Agent or a function returning a fresh Agent, got "
                f"{type(source).__name__}"
            )

        async def delegate(task: str, context: ToolContext) -> str:
            """Args:
            task: The task for the sub-agent, with everything it needs to know.
            """
            return await self.run_child(context, task)

        super().__init__(
            delegate,
            name=name,
            description=description or f"Hand a task to the {name} agent; returns its answer.",
            read_only=parallel,  # the planner's flag for "may run alongside other calls"
            idempotent=True,  # a re-run continues the child's session, never repeats it
        )

    def _init_state(self, output_type: Any) -> None:
        self._instance = None
        self._factory = None
        self.output_type = output_type
        self._live: dict[str, Running] = {}  # children that stopped for an interrupt
        self._policy: tuple[Runtime, Runtime, int, Runtime] | None = None
        """(the child's runtime, the parent's, the child's hook registry version, the
        child's under the parent's policy): the last one built, reused while all three are
        the same (an Agent object's calls; a hook added to the child since rebuilds it)."""
        self._busy = threading.Lock()
        self._made: dict[int, Agent] = {}  # built by the factory, holding tool sources

    def make_child(self, context: ToolContext) -> Agent:
        """A fresh child for one call (factory mode)."""
        return self._built()

    def lookup_agent(self, parent: AgentRef) -> AgentRef:
        """An agent with the child's tools, to check an answer against (it is not run):
        the Agent object, a child waiting for an answer, or a fresh one from the factory."""
        if self._instance is not None:
            return self._instance
        for child in self._live.values():
            return child
        return self._built()

    def _built(self) -> Agent:
        assert self._factory is not None
        child = self._factory()
        from tether.agent import Agent

        if not isinstance(child, Agent):
            raise ConfigurationError(
                f"the factory of sub-agent tool {self.name!r} returned "
                f"{type(child).__name__}, not an Agent"
            )
        return child

    async def run_child(self, context: ToolContext, task: str) -> str:
        """Run (or continue) the child of this call; its answer, or an interrupt."""
        parent = context.agent
        run = parent.conversation.run
        position = run.batch_position if run is not None else 0
        call = context.tool_call
        where = step(self.name, call.id)
        sid = child_session_id(parent.session_id, self.name, position, call.id)
        if self._instance is not None:
            if not self._busy.acquire(blocking=False):
                raise AgentBusyError(
                    f"sub-agent {self.name!r} is one Agent object and is running another "
                    "call; pass a factory to as_tool for calls that overlap"
                )
            try:
                child = self._live.get(sid) or self._under(self._instance, context, sid)
                return await self._drive(child, context, task, where, position, sid)
            finally:
                self._busy.release()
        waiting = self._live.get(sid)
        if waiting is not None:
            return await self._drive(waiting, context, task, where, position, sid)
        made = self.make_child(context)
        try:
            return await self._drive(
                self._under(made, context, sid), context, task, where, position, sid
            )
        finally:
            self._track(made)

    def _track(self, made: Agent) -> None:
        """Keep an Agent the factory built while its tree holds something to close (an
        MCP server, say), for the parent's ``close()``; one held nothing is let go."""
        if _holds(made, set()):
            self._made[id(made)] = made
        else:
            self._made.pop(id(made), None)

    def subagents(self) -> list[Agent]:
        """The child Agents this tool runs that may hold tool sources: the Agent object,
        or those its factory built (kept until :meth:`forget_made`)."""
        made = list(self._made.values())
        return made if self._instance is None else [self._instance, *made]

    def forget_made(self) -> None:
        """Let go of the Agents the factory built (after they were closed)."""
        self._made.clear()

    def _under(self, agent: Agent, context: ToolContext, sid: str) -> Running:
        """``agent``'s runtime under the calling agent's, on the conversation of ``sid``
        (the child Agent object itself is not changed)."""
        from tether.conversation import Conversation
        from tether.inheritance import placed, policy_of
        from tether.running import Running

        parent = context.agent
        call = context.tool_call
        own, above = agent.runtime, parent.runtime
        memo = self._policy
        version = own.hooks.version
        if memo is None or memo[0] is not own or memo[1] is not above or memo[2] != version:
            memo = self._policy = (own, above, version, policy_of(own, above, self.name))
        runtime = placed(memo[3], above, step(self.name, call.id), call.id, parent)
        return Running(runtime, Conversation(sid))

    async def _drive(
        self, child: Running, context: ToolContext, task: str, where: str, position: int, sid: str
    ) -> str:
        parent = context.agent
        call = context.tool_call
        conversation = child.conversation
        view = await _load(child, parent)
        try:
            if conversation.suspension is not None:
                answers: dict[str, Any] = {}
                for interrupt in child.pending_interrupts:
                    key = lifted_id(interrupt.id, self.name, call.id, position)
                    if key in parent.conversation.answers:
                        answers[interrupt.id] = parent.conversation.answers[key]
                events = child.resume_stream(answers, output_type=self.output_type)
            elif conversation.messages:  # finished before a crash lost the parent's record
                return self._answer_of(child, where, view)
            else:
                events = child.stream(task, output_type=self.output_type)
            driving = _forward(events, context, where)
            if child.runtime.store is None:  # nothing to journal: cancelled where it stands
                result = await driving
            else:
                result = await _cancelled_cooperatively(child, driving)
        except asyncio.CancelledError:
            child.cancel()
            raise
        finally:
            _learn(child)
        run = parent.conversation.run
        if run is not None:
            run.usage.add_child(where, result.usage)
        if result.stop_reason == "interrupt":
            self._keep(sid, child)
            lifted = [lift(i, self.name, call.id, position) for i in child.pending_interrupts]
            raise InterruptSignal(*lifted)  # every pending one, in one suspension
        self._forget(sid)
        if result.stop_reason != "end_turn":
            raise _stopped(where, result.stop_reason, result.reason)
        return _reply(result)

    def _answer_of(self, child: Running, where: str, view: SessionView | None) -> str:
        """The saved answer of a child session that ended (a crash lost the parent's
        record of it), or the same error its run's stop gave (``view``: its fold)."""
        self._forget(child.session_id)
        _learn(child)
        if view is not None and view.stop_reason not in (None, "end_turn"):
            raise _stopped(where, cast("StopReason", view.stop_reason), view.end_reason)
        last = child.messages[-1]
        if last.role != "assistant" or last.tool_calls:
            raise SubAgentError(
                f"sub-agent session {child.session_id} ended without an answer "
                "(it stopped before its final reply)"
            )
        if self.output_type is None:
            return last.text
        from tether.structured import OutputSpec

        return _reply_value(OutputSpec(self.output_type).parse(last.text))

    def _keep(self, sid: str, child: Running) -> None:
        self._live[sid] = child

    def _forget(self, sid: str) -> None:
        self._live.pop(sid, None)


def _holds(agent: Agent, seen: set[int]) -> bool:
    """Whether ``agent``'s tree has tool sources to close."""
    if id(agent) in seen:
        return False
    seen.add(id(agent))
    toolset = agent.runtime.toolset
    if toolset.sources:
        return True
    return any(
        _holds(child, seen)
        for tool in toolset.tools
        if isinstance(tool, SubAgentTool)
        for child in tool.subagents()
    )


def close_tree(top: Agent) -> None:
    """Close ``top``'s tool sources and thread pool and those of every agent under it
    (sub-agents, workflow nodes, at any depth), each once however many tools or parents
    share it; every one is closed even when one fails (the first error is raised)."""
    agents: set[int] = set()
    sources: set[int] = set()
    first: Exception | None = None
    stack = [top]
    while stack:
        agent = stack.pop()
        if id(agent) in agents:
            continue
        agents.add(id(agent))
        runtime = agent.runtime
        runtime.threads.release()
        for source in runtime.toolset.sources:
            if id(source) in sources:
                continue
            sources.add(id(source))
            try:
                source.close()
            except Exception as exc:  # the others are still closed
                first = first or exc
        for tool in runtime.toolset.tools:
            if isinstance(tool, SubAgentTool):
                stack.extend(tool.subagents())
                tool.forget_made()
    if first is not None:
        raise first


def _stopped(where: str, stop_reason: StopReason, reason: str | None) -> SubAgentError:
    """A child that stopped without answering (a limit, a block, the budget)."""
    error = SubAgentError(
        f"sub-agent {where} stopped with {stop_reason}"
        + (f": {reason}" if reason else "")
        + " before it answered"
    )
    error.stop_reason, error.reason = stop_reason, reason
    return error


def _learn(child: Running) -> None:
    """What the redaction masks in the child's calls is hidden in its whole tree (the
    parent's tool result and answer may quote it: traces and trajectories hide it too)."""
    from tether.governance.redaction import learn_calls, redactor_of

    learn_calls(child.runtime.hidden, child.messages, redactor_of(child))


async def _cancelled_cooperatively(child: Running, driving: Awaitable[Result]) -> Result:
    """Drive the child's run in a task of its own, so that a cancel of this call (the
    parent's cancel, a timeout) becomes ``child.cancel()``: the child stops at its next
    check and journals its end (``cancelled``, as a cancelled top-level run does), its
    own children likewise; then the CancelledError goes on. A cancel repeated while the
    child winds down changes nothing (``cancel()`` is idempotent); the child's task
    itself cancelled (the event loop shutting down) abandons it, nothing written."""

    async def drive() -> Result | _Escaped:
        try:
            return await driving
        except (KeyboardInterrupt, SystemExit) as exc:
            return _Escaped(exc)  # asyncio would raise it out of the loop, past the cleanup

    # The task's first step runs before this call can see a cancel (the loop runs ready
    # callbacks in order), and it reaches the child's Running._open, which sets the run's
    # signal, without awaiting: the cancel below always lands on the signal of the run.
    running = asyncio.ensure_future(drive())
    try:
        outcome = await asyncio.shield(running)
    except asyncio.CancelledError:
        child.cancel()
        while not running.done():
            try:
                await asyncio.wait({running})
            except asyncio.CancelledError:
                continue  # cancelled again: the child is stopping already
        if not running.cancelled():
            running.exception()  # retrieved: the cancel that stopped it is what goes on
        raise
    if isinstance(outcome, _Escaped):
        raise outcome.error
    return outcome


class _Escaped:
    """A KeyboardInterrupt or SystemExit from a child's task, re-raised in the call's."""

    __slots__ = ("error",)

    def __init__(self, error: KeyboardInterrupt | SystemExit) -> None:
        self.error = error


async def _forward(
    events: AsyncGenerator[StreamEvent, None], context: ToolContext, where: str
) -> Result:
    """Drive a child's stream to its (last) Result, forwarding each event live to the
    parent's stream (``ctx.emit``: the child waits while the parent's consumer is behind),
    tagged with its path (a grandchild's path is prefixed, not nested)."""
    result: Result | None = None
    outlet = context.outlet
    async with aclosing(events) as stream:
        async for event in stream:
            if isinstance(event, FinalResult):
                result = event.result
                continue
            if outlet is None or isinstance(event, InterruptRaised):
                continue  # the parent raises the lifted interrupts itself
            if isinstance(event, SubAgentEvent):
                tagged = SubAgentEvent(f"{where}/{event.path}", event.event)
            else:
                tagged = SubAgentEvent(where, event)
            if outlet.channel.offer(outlet, tagged) is None:  # full: wait for room
                await context.emit(tagged)
    assert result is not None
    return result


async def _load(child: Running, parent: AgentRef) -> SessionView | None:
    """Bring a child object up to date with its session in the store (if it has one);
    a new child session is created with its place in the tree as metadata. The fold
    read, if any."""
    store = child.runtime.store
    conversation = child.conversation
    if store is None or conversation.synced_version != -1:
        return None
    record = await store.load(child.session_id)
    if record is None:
        tree = {"parent_session": parent.session_id, "agent_path": child.path}
        await store.create(child.session_id, metadata={SUB_SESSION_KEY: tree})
        return None
    from tether.session import fold

    view = fold(record)
    conversation.adopt(view)
    return view


def _reply(result: Result) -> str:
    if result.output is None:
        return result.text
    return _reply_value(result.output)


def _reply_value(value: Any) -> str:
    import json

    from pydantic_core import to_jsonable_python

    data: JSONValue = to_jsonable_python(value)
    return json.dumps(data, ensure_ascii=False)


def as_tool(
    source: Agent | AgentFactory,
    *,
    name: str,
    description: str | None = None,
    parallel: bool = False,
    output_type: Any = None,
) -> SubAgentTool:
    """An Agent, or a factory of fresh Agents, as a tool of another agent (see SubAgentTool)."""
    return SubAgentTool(
        source, name=name, description=description, parallel=parallel, output_type=output_type
    )
