"""The diff of a replay against its recording: tool calls added, removed and changed (turn by
turn, aligned by tool and arguments), verdicts that changed (deny, confirm, guide,
transform, proceed: :meth:`tether.evals.policy_recorded.Recorded.then` on both journals)
and final answers that changed. Every argument and text passes through the one redaction
path (:class:`tether.governance.masks.Masker`) before it is kept here."""

from __future__ import annotations

import difflib
import json
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from tether.evals.replay_tools import coerced
from tether.governance.masks import Masker, learned_masks
from tether.governance.redaction import redactor_of

if TYPE_CHECKING:
    from tether.agent import Agent
    from tether.evals.replay_record import Call, Recording
    from tether.evals.replay_tools import ReplayTools

Kind = Literal["same", "changed", "added", "removed"]


@dataclass(frozen=True, slots=True)
class CallRow:
    """One tool call, then and now (``then_*`` None: added; ``now_*`` None: removed).

    ``answered``: how the replay answered it: ``journal`` (the recorded result, nothing
    ran), ``not run`` (no recorded result: a tool error), ``live`` (it ran, live tools),
    ``""`` (no tool was reached: denied, guided, asked and refused, or removed)."""

    kind: Kind
    turn: int
    tool: str
    then_arguments: dict[str, Any] | None
    now_arguments: dict[str, Any] | None
    then: str | None
    now: str | None
    then_status: str | None
    now_status: str | None
    answered: str = ""

    @property
    def verdict_changed(self) -> bool:
        return self.then is not None and self.now is not None and self.then != self.now


@dataclass(frozen=True, slots=True)
class AnswerRow:
    """One turn's prompt and final answers, then and now."""

    turn: int
    prompt: str
    then: str | None
    now: str | None
    stop: str | None

    @property
    def changed(self) -> bool:
        return self.then != self.now


@dataclass(slots=True)
class ReplayDiff:
    """What a replay did differently from its recording (all values redacted)."""

    session_id: str
    replay_session_id: str
    calls: list[CallRow] = field(default_factory=list)
    answers: list[AnswerRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def count(self, kind: Kind) -> int:
        return sum(1 for row in self.calls if row.kind == kind)

    @property
    def verdicts_changed(self) -> list[CallRow]:
        return [row for row in self.calls if row.verdict_changed]

    @property
    def answers_changed(self) -> list[AnswerRow]:
        return [row for row in self.answers if row.changed]

    @property
    def converged(self) -> bool:
        """Same calls, same verdicts, same answers, and nothing stopped the replay."""
        return (
            all(row.kind == "same" for row in self.calls)
            and not self.verdicts_changed
            and not self.answers_changed
            and not self.notes
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "replay_session_id": self.replay_session_id,
            "converged": self.converged,
            "added": self.count("added"),
            "removed": self.count("removed"),
            "changed": self.count("changed"),
            "verdicts_changed": len(self.verdicts_changed),
            "answers_changed": len(self.answers_changed),
            "calls": [
                {**asdict(row), "verdict_changed": row.verdict_changed} for row in self.calls
            ],
            "answers": [{**asdict(row), "changed": row.changed} for row in self.answers],
            "notes": list(self.notes),
        }


def diff_sessions(
    then: Recording,
    now: Recording,
    *,
    tools: ReplayTools,
    stops: list[str | None],
    notes: list[str],
    agent: Agent,
) -> ReplayDiff:
    """The redacted diff of the replayed session ``now`` against the recording ``then``."""
    masks: dict[str, set[str]] = {}
    for side in (then, now):
        for tool, keys in learned_masks(side.approvals, side.interrupt_calls).items():
            masks.setdefault(tool, set()).update(keys)
    masker = Masker(redactor_of(agent), masks, set(agent.runtime.hidden))
    for side in (then, now):  # learn every mask first: any text may quote any call
        for call in side.calls:
            masker.learn(call.call.name, dict(call.call.arguments))
    diff = ReplayDiff(then.session_id, now.session_id, notes=[masker.text(n) for n in notes])
    prompted = [i for i, t in enumerate(then.turns) if t.prompt]  # the turns replayed
    for index, turn in enumerate(prompted):
        before = [c for c in then.calls if c.turn == turn]
        after = [c for c in now.calls if c.turn == index]
        diff.calls.extend(_align(index, before, after, then, now, tools, masker, agent))
        recorded = then.turns[turn]
        replayed = now.turns[index] if index < len(now.turns) else None
        diff.answers.append(
            AnswerRow(
                index + 1,
                masker.text("\n".join(m.text for m in recorded.prompt)),
                None if recorded.answer is None else masker.text(recorded.answer),
                None if replayed is None or replayed.answer is None
                else masker.text(replayed.answer),
                stops[index] if index < len(stops) else None,
            )
        )  # fmt: skip
    return diff


def _key(call: Call, agent: Agent) -> str:
    """A call's tool and its arguments as the tool would run them (coerced)."""
    tool = agent.runtime.toolset.by_name.get(call.call.name)
    arguments = dict(call.call.arguments)
    if tool is not None:
        return f"{call.call.name}\x00{coerced(tool, arguments)}"
    return f"{call.call.name}\x00{json.dumps(arguments, sort_keys=True, default=repr)}"


def _align(
    turn: int,
    before: list[Call],
    after: list[Call],
    then: Recording,
    now: Recording,
    tools: ReplayTools,
    masker: Masker,
    agent: Agent,
) -> list[CallRow]:
    rows: list[CallRow] = []
    keys = [_key(c, agent) for c in before], [_key(c, agent) for c in after]
    matcher = difflib.SequenceMatcher(None, *keys, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        left, right = before[i1:i2], after[j1:j2]
        if op == "equal":
            rows.extend(
                _row("same", turn, a, b, then, now, tools, masker)
                for a, b in zip(left, right, strict=True)
            )
            continue
        for k in range(max(len(left), len(right))):
            a = left[k] if k < len(left) else None
            b = right[k] if k < len(right) else None
            if a is not None and b is not None and a.call.name == b.call.name:
                rows.append(_row("changed", turn, a, b, then, now, tools, masker))
                continue
            if a is not None:
                rows.append(_row("removed", turn, a, None, then, now, tools, masker))
            if b is not None:
                rows.append(_row("added", turn, None, b, then, now, tools, masker))
    return rows


def _now(call: Call, now: Recording, tools: ReplayTools) -> str:
    """The replay's verdict: its journal's, or ``transform`` when a hook or middleware
    rewrote a call the replay answered without running (no intent records the rewrite)."""
    verdict = now.recorded.then(call.call.id)
    reached = tools.reached.get(call.call.id)
    rewritten = reached is not None and reached != (call.call.name, dict(call.call.arguments))
    return "transform" if verdict == "proceed" and rewritten else verdict


def _row(
    kind: Kind,
    turn: int,
    a: Call | None,
    b: Call | None,
    then: Recording,
    now: Recording,
    tools: ReplayTools,
    masker: Masker,
) -> CallRow:
    name = (a or b).call.name  # type: ignore[union-attr]
    answered = ""
    if b is not None:
        cid = b.call.id
        if cid in tools.answered:
            answered = "journal"
        elif cid in tools.not_run:
            answered = "not run"
        elif cid in tools.live:
            answered = "live"
    return CallRow(
        kind=kind,
        turn=turn + 1,
        tool=name,
        then_arguments=None if a is None else masker.arguments(name, dict(a.call.arguments)),
        now_arguments=None if b is None else masker.arguments(b.call.name, dict(b.call.arguments)),
        then=None if a is None else then.recorded.then(a.call.id),
        now=None if b is None else _now(b, now, tools),
        then_status=None if a is None else then.recorded.status.get(a.call.id, "none"),
        now_status=None if b is None else now.recorded.status.get(b.call.id, "none"),
        answered=answered,
    )
