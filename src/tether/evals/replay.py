"""Replay a recorded session with another agent (a new prompt, model or policy).

:func:`replay_session` replays the recording's user turns in order on a clone of the
agent that runs in its own new session of ``store`` (the recorded one is only read, by
the caller, into a :class:`~tether.evals.replay_record.Recording`). The clone gets one
extra tool middleware, innermost (:class:`~tether.evals.replay_tools.ReplayTools`): a call
the recording ran (same tool, same coerced arguments) is answered with the recorded
result and runs nothing; any other call gets a tool error and runs nothing, unless
``live_tools``. The loop is not changed: interventions, hooks and the other middleware
judge every call as at run time. An interrupt the replay raises is answered with the
answer the recording gave an interrupt of the same name at the same point for the same
call; one with no recorded answer stops the replay of that turn (a divergence). The
diff (:mod:`tether.evals.replay_diff`) compares both journals.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from tether.errors import ConfigurationError, TetherError
from tether.evals.replay_diff import ReplayDiff, diff_sessions
from tether.evals.replay_record import Asked, Recording, read_recording
from tether.evals.replay_tools import ReplayTools, coerced

if TYPE_CHECKING:
    from tether.agent import Agent
    from tether.control.interrupts import Interrupt
    from tether.durable import Store
    from tether.messages import JSONValue

__all__ = ["ReplayDiff", "new_replay_id", "replay_session"]

MAX_ROUNDS: Final = 100
"""Interrupt rounds answered per turn."""
DECIDED_BY: Final = "tether replay (the recorded answer)"


def new_replay_id() -> str:
    """A fresh session id for a replay."""
    return f"replay-{uuid.uuid4().hex[:16]}"


@dataclass(slots=True)
class _Outcome:
    stops: list[str | None] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


async def replay_session(
    recording: Recording,
    agent: Agent,
    store: Store,
    *,
    session_id: str | None = None,
    live_tools: bool = False,
) -> ReplayDiff:
    """Replay ``recording`` with ``agent`` in a new session ``session_id`` of ``store`` and
    return the diff (see the module docstring). ``store`` is where the replay journals;
    the recorded session is never written."""
    from tether.agent import Agent

    if not isinstance(agent, Agent):
        raise ConfigurationError(f"replay needs an Agent, got {type(agent).__name__}")
    sid = session_id or new_replay_id()
    if sid == recording.session_id:
        raise ConfigurationError(f"the replay cannot run in the recorded session {sid!r}")
    if await store.load(sid) is not None:
        raise ConfigurationError(f"session {sid!r} already exists in the store: pick a new id")
    prompts = [turn.prompt for turn in recording.turns if turn.prompt]
    if not prompts:
        raise ConfigurationError(f"session {recording.session_id!r} has no user turn to replay")
    tools = ReplayTools(recording.runs, live_tools=live_tools)
    runtime = agent.runtime
    given = [*runtime.model_middleware, *runtime.tool_middleware]  # one object may be both
    middleware: list[Any] = [m for i, m in enumerate(given) if all(m is not o for o in given[:i])]
    middleware.append(tools)
    replayer = agent.clone(store=store, session_id=sid, middleware=middleware)
    outcome = _Outcome()
    answers = _Answers(recording.asked)
    for index, prompt in enumerate(prompts):
        stop = await _turn(replayer, prompt, answers, index, outcome)
        outcome.stops.append(stop)
        if stop == "interrupt" and index + 1 < len(prompts):  # a suspended session takes no turn
            rest = range(index + 2, len(prompts) + 1)
            left = f"turn {rest[0]}" if len(rest) == 1 else f"turns {rest[0]} to {rest[-1]}"
            outcome.notes.append(f"{left} not replayed: the replay waits for an answer")
            break
    replayed = await read_recording(store, sid)
    if replayed is None:  # the clone journals its first turn: a store that lost it
        raise ConfigurationError(f"the replay session {sid!r} is not in the store")
    return diff_sessions(
        recording,
        replayed,
        tools=tools,
        stops=outcome.stops,
        notes=outcome.notes,
        agent=replayer,
    )


async def _turn(
    agent: Agent, prompt: list[Any], answers: _Answers, index: int, outcome: _Outcome
) -> str | None:
    try:
        result = await agent.invoke_async(prompt)
        for _ in range(MAX_ROUNDS):
            if result.stop_reason != "interrupt":
                break
            given: dict[str, JSONValue] = {}
            for interrupt in result.interrupts:
                found = answers.take(agent, interrupt)
                if not found and answers.left_open(agent, interrupt):
                    return "interrupt"  # the recording left it unanswered too
                if not found:
                    outcome.notes.append(
                        f"turn {index + 1}: the interrupt {interrupt.name!r} has no recorded "
                        "answer; the replay of this turn stopped there"
                    )
                    return "interrupt"
                given[interrupt.id] = found[0]
            result = await agent.resume_async(given, decided_by=DECIDED_BY)
    except TetherError as exc:  # a failed run (RunError), a session left suspended...
        outcome.notes.append(f"turn {index + 1}: the run failed: {type(exc).__name__}: {exc}")
        return "error"
    return result.stop_reason


class _Answers:
    """The recorded answers, each given once, to the first interrupt that matches it."""

    def __init__(self, asked: list[Asked]) -> None:
        self.pending = [a for a in asked if a.answered]
        self.open = [a for a in asked if not a.answered]

    def left_open(self, agent: Agent, interrupt: Interrupt) -> bool:
        """Whether the recording raised the same interrupt and never answered it."""
        return any(_same(agent, asked.interrupt, interrupt) for asked in self.open)

    def take(self, agent: Agent, interrupt: Interrupt) -> tuple[JSONValue, ...]:
        """``(answer,)``, or ``()`` when no recorded answer fits."""
        for index, asked in enumerate(self.pending):
            if _same(agent, asked.interrupt, interrupt):
                return (self.pending.pop(index).answer,)
        return ()


def _same(agent: Agent, then: Interrupt, now: Interrupt) -> bool:
    if (then.name, then.point, then.source) != (now.name, now.point, now.source):
        return False
    a, b = then.tool_call, now.tool_call
    if a is None or b is None:
        return a is b
    if a.name != b.name:
        return False
    tool = agent.runtime.toolset.by_name.get(a.name)
    if tool is None:
        return dict(a.arguments) == dict(b.arguments)
    return coerced(tool, dict(a.arguments)) == coerced(tool, dict(b.arguments))
