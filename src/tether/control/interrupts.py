"""Interrupts: suspend a run for a human (or another system) and resume it with an answer.

Raising is two-phase: the first time, ``interrupt(...)`` raises
:class:`InterruptSignal` and the run stops with stop reason ``interrupt``; after
``agent.resume({id: response})`` the same call returns the response instead.
Ids are deterministic from (session, point, position in the conversation, tool call
id, name), so the re-run finds its answer, and an answer given to one session is never
accepted by another of the same shape. Journals written before the session was part of
the id keep their ids: :class:`Interrupter` finds an answer under either.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from tether.errors import AnswerError
from tether.messages import JSONValue, ToolCall

InterruptSource: TypeAlias = Literal["tool", "hook", "intervention", "caller", "in_doubt"]


def interrupt_id(
    point: str,
    position: int,
    tool_call_id: str | None,
    name: str,
    session: str | None = None,
) -> str:
    """The deterministic id of an interrupt raised at ``point`` for ``name`` in ``session``
    (None: the id journals written before sessions were bound used)."""
    key = f"{point}\x00{position}\x00{tool_call_id or ''}\x00{name}"
    if session is not None:
        key = f"{session}\x00{key}"
    return "int_" + hashlib.sha256(key.encode()).hexdigest()[:20]


@dataclass(frozen=True, slots=True)
class Interrupt:
    """A pending question: ``id`` to answer, ``name`` and ``reason`` to show, where it came from."""

    id: str
    name: str
    reason: JSONValue
    source: InterruptSource
    point: str
    tool_call: ToolCall | None = None

    def to_dict(self) -> dict[str, Any]:
        call = self.tool_call
        return {
            "id": self.id,
            "name": self.name,
            "reason": self.reason,
            "source": self.source,
            "point": self.point,
            "tool_call": None
            if call is None
            else {"id": call.id, "name": call.name, "arguments": call.arguments},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Interrupt:
        call = data.get("tool_call")
        return cls(
            id=data["id"],
            name=data["name"],
            reason=data.get("reason"),
            source=data["source"],
            point=data["point"],
            tool_call=None
            if call is None
            else ToolCall(call["id"], call["name"], dict(call.get("arguments") or {})),
        )


class InterruptSignal(BaseException):
    """Suspends the run. A BaseException, so a tool's ``except Exception`` cannot swallow it.

    Carries every interrupt raised at one point (``interrupts``; ``interrupt`` is the
    first), so one suspension asks all of them at once.
    """

    def __init__(self, interrupt: Interrupt, *more: Interrupt) -> None:
        self.interrupts = [interrupt, *more]
        self.interrupt = interrupt
        names = ", ".join(f"{i.name!r} ({i.id})" for i in self.interrupts)
        super().__init__(f"interrupt {names}")

    @classmethod
    def joined(cls, signals: list[InterruptSignal]) -> InterruptSignal:
        """One signal for several raised at the same point (in the order they were raised)."""
        if len(signals) == 1:
            return signals[0]
        first, *rest = [i for s in signals for i in s.interrupts]
        return cls(first, *rest)


class Interrupter:
    """Raises interrupts for one point of one run, or returns their recorded answers."""

    __slots__ = ("_answers", "_point", "_position", "_session", "_source", "_tool_call")

    def __init__(
        self,
        answers: dict[str, JSONValue],
        point: str,
        position: int,
        source: InterruptSource,
        tool_call: ToolCall | None = None,
        *,
        session: str | None = None,
    ) -> None:
        self._answers = answers
        self._point = point
        self._position = position
        self._source = source
        self._tool_call = tool_call
        self._session = session

    def __call__(
        self,
        name: str,
        reason: JSONValue = None,
        source: InterruptSource | None = None,
        *,
        tool_call: ToolCall | None = None,
    ) -> JSONValue:
        """The recorded answer, else raise. ``tool_call``: the call as it stands at the
        question (after the policies ahead of a Confirm), recorded as what will run."""
        call_id = self._tool_call.id if self._tool_call is not None else None
        iid = interrupt_id(self._point, self._position, call_id, name, self._session)
        if iid in self._answers:
            return self._answers[iid]
        if self._session is not None:  # a journal written before ids named the session
            legacy = interrupt_id(self._point, self._position, call_id, name)
            if legacy in self._answers:
                return self._answers[legacy]
        interrupt = Interrupt(
            iid, name, reason, source or self._source, self._point, tool_call or self._tool_call
        )
        raise InterruptSignal(interrupt)


def not_json(value: Any) -> str | None:
    """Why ``value`` cannot be saved with a session (it is not strict JSON), or None."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        return str(exc)
    return None


def check_response(interrupt_id_: str, value: Any) -> JSONValue:
    """Refuse a response that is not JSON (it must survive the journal)."""
    problem = not_json(value)
    if problem is not None:
        raise AnswerError(
            f"the response to interrupt {interrupt_id_} is not JSON-serializable ({problem}); "
            "answer with str, int, float, bool, None, lists and dicts"
        )
    return value


@dataclass(frozen=True, slots=True)
class ConfirmDecision:
    """A human's answer to a Confirm, parsed from a resume response."""

    approved: bool
    reason: str | None = None
    args: dict[str, Any] | None = None

    @classmethod
    def parse(cls, response: JSONValue) -> ConfirmDecision:
        """``True``/``"approve"`` approve; ``False``/``"deny"`` deny;
        ``{"approved": bool, "reason": str, "args": {...}}`` for details."""
        if response is True or response == "approve":
            return cls(True)
        if response is False or response == "deny":
            return cls(False, "the approver denied it")
        if isinstance(response, dict) and isinstance(response.get("approved"), bool):
            args = response.get("args")
            if args is not None and not isinstance(args, dict):
                raise AnswerError("'args' in a Confirm response must be a JSON object")
            reason = response.get("reason")
            return cls(response["approved"], None if reason is None else str(reason), args)
        raise AnswerError(
            f"a Confirm response must be True/'approve', False/'deny' or "
            f'{{"approved": bool, "reason": ..., "args": {{...}}}}, got {response!r}'
        )
