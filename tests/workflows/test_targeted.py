"""Targeted resume in a workflow (issue 23): a Parallel of two agents each asking for an
approval, answered for one branch first, runs that branch to its end while the other stays
pending (same interrupt id, same approval row); the second answer finishes the workflow and
the join sees both outputs in the branches' order. In one process, in a process per step,
and through the worker."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import workflow_agents
from workflow_agents import ConfirmWrites, effects_of, review_workflow, writer

from tether import Agent, tool
from tether.control import BeforeToolCall, InterventionHandler
from tether.durable import Store
from tether.journal_fold import fold
from tether.ops.worker import Worker, WorkerConfig
from tether.workflows import Parallel

SESSION = "wf-1"
JOINED = 'summary: ["legal wrote (ok legal)", "tech wrote (ok tech)"]'
LEGAL = "review#2/legal#1/confirm:ConfirmWrites"
TECH = "review#2/tech#2/confirm:ConfirmWrites"


async def _statuses(store: Store) -> dict[str, str]:
    """The status of the workflow's session and of each branch's child session."""
    out: dict[str, str] = {}
    for s in await store.list_sessions():
        if s.session_id == SESSION:
            out["workflow"] = s.status
        for branch in ("legal", "tech"):
            if s.session_id.startswith(f"{SESSION}/") and f"/{branch}#" in s.session_id:
                out[branch] = s.status
    return out


async def _rows(store: Store) -> dict[str, tuple[str, str]]:
    """interrupt id -> (approval id, status); one row per interrupt, asserted."""
    found = await store.approvals.find(session_id=SESSION)
    rows = {a.interrupt_id: (a.id, a.status) for a in found}
    assert len(rows) == len(found), found  # nobody is asked twice
    return rows


async def test_a_parallel_approval_answered_for_one_branch_first_runs_that_branch_to_its_end(
    stores: Callable[[], Store], tmp_path: Path
) -> None:
    effects = tmp_path / "effects"
    first = await review_workflow(stores(), effects, tech_asks=True).invoke_async("the plan")
    assert first.stop_reason == "interrupt"
    legal, tech = sorted(first.interrupts, key=lambda i: i.name)
    assert (legal.name, tech.name) == (LEGAL, TECH)
    inbox = stores()
    asked = await _rows(inbox)
    assert {iid: status for iid, (_, status) in asked.items()} == {
        legal.id: "pending",
        tech.id: "pending",
    }

    # the second branch answered first: it runs to its end, the first one waits
    wf = review_workflow(stores(), effects, tech_asks=True)
    partial = await wf.resume_async({tech.id: "approve"})
    assert partial.stop_reason == "interrupt"
    assert partial.interrupts == [legal]  # the same interrupt: id, name, question, call
    assert wf.pending_interrupts == [legal]
    assert effects_of(effects) == ["draft", "tech"]  # exactly the answered branch wrote
    assert await _statuses(inbox) == {
        "workflow": "suspended",
        "tech": "completed",  # its agent finished its run
        "legal": "suspended",
    }
    assert await _rows(inbox) == {
        legal.id: asked[legal.id],  # the same row, still pending
        tech.id: (asked[tech.id][0], "approved"),
    }

    done = await review_workflow(stores(), effects, tech_asks=True).resume_async(
        {legal.id: "approve"}
    )
    assert done.stop_reason == "end_turn", done.reason
    assert done.text == JOINED  # the join: both outputs, in the branches' order
    assert effects_of(effects) == ["draft", "tech", "legal"]  # nothing ran twice
    assert await _rows(inbox) == {
        legal.id: (asked[legal.id][0], "approved"),
        tech.id: (asked[tech.id][0], "approved"),
    }
    assert set((await _statuses(inbox)).values()) == {"completed"}


def test_each_branch_answered_in_its_own_process(db: str, tmp_path: Path) -> None:
    effects = tmp_path / "effects"
    first = workflow_agents.step(db, effects, "start", tech_asks=True)
    legal, tech = sorted(first["interrupts"], key=lambda i: i["name"])
    assert (legal["name"], tech["name"]) == (LEGAL, TECH)
    partial = workflow_agents.step(
        db, effects, "resume", json.dumps({tech["id"]: "approve"}), tech_asks=True
    )
    assert partial["stop_reason"] == "interrupt"
    assert partial["interrupts"] == [legal]  # same id, name, point, source
    assert effects_of(effects) == ["draft", "tech"]
    done = workflow_agents.step(
        db, effects, "resume", json.dumps({legal["id"]: "approve"}), tech_asks=True
    )
    assert done["stop_reason"] == "end_turn", done
    assert done["text"] == JOINED
    assert effects_of(effects) == ["draft", "tech", "legal"]


async def test_the_worker_runs_the_branch_decided_first_and_the_other_stays_pending(
    stores: Callable[[], Store], tmp_path: Path
) -> None:
    effects = tmp_path / "effects"
    first = await review_workflow(stores(), effects, tech_asks=True).invoke_async("the plan")
    legal, tech = sorted(first.interrupts, key=lambda i: i.name)
    inbox = stores()
    asked = await _rows(inbox)
    await inbox.approvals.decide(asked[tech.id][0], "approve", decided_by="alice")
    assert (await _statuses(inbox))["workflow"] == "ready"  # one branch of two decided

    def factory(session_id: str) -> Agent:  # the Agent the workflow runs as
        return review_workflow(stores(), effects, tech_asks=True).agent

    config = WorkerConfig(poll=0.05, listen=False)
    outcomes = await Worker(stores(), factory, config).run(once=True)
    assert [(o.session_id, o.outcome) for o in outcomes] == [(SESSION, "suspended")]
    assert outcomes[0].detail == "1 approval(s) pending"
    assert effects_of(effects) == ["draft", "tech"]
    assert await _statuses(inbox) == {
        "workflow": "suspended",
        "tech": "completed",
        "legal": "suspended",
    }
    assert await _rows(inbox) == {
        legal.id: asked[legal.id],
        tech.id: (asked[tech.id][0], "approved"),
    }
    assert await Worker(stores(), factory, config).run(once=True) == []

    await inbox.approvals.decide(asked[legal.id][0], "approve", decided_by="bob")
    done = await Worker(stores(), factory, config).run(once=True)
    assert [(o.session_id, o.outcome) for o in done] == [(SESSION, "completed")]
    assert effects_of(effects) == ["draft", "tech", "legal"]
    record = await inbox.load(SESSION)
    assert record is not None
    assert fold(record).messages[-1].text == JOINED  # the join saw both, in order


class HoldWrite(InterventionHandler):
    """Holds the ``write`` of ``text`` (after its Confirm was answered) until released."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.inside = asyncio.Event()
        self.release = asyncio.Event()

    async def before_tool_call(self, event: BeforeToolCall) -> None:
        if event.tool_call.name == "write" and event.tool_call.arguments["text"] == self.text:
            self.inside.set()
            await self.release.wait()


def _review(store: Store, effects: Path, *policies: InterventionHandler) -> Parallel:
    """Two agents, each writing once behind the workflow's Confirm."""

    @tool
    def write(text: str) -> str:
        """Write text (a side effect that must happen once)."""
        with effects.open("a", encoding="utf-8") as f:
            f.write(f"{text}\n")
        return f"ok {text}"

    legal = Agent(writer("legal"), tools=[write], name="legal")
    tech = Agent(writer("tech"), tools=[write], name="tech")
    return Parallel(
        legal,
        tech,
        name="review",
        store=store,
        session_id=SESSION,
        interventions=[ConfirmWrites(), *policies],
    )


async def test_a_branch_decided_in_the_inbox_while_the_other_branch_runs_is_not_asked_again(
    stores: Callable[[], Store], tmp_path: Path
) -> None:
    effects = tmp_path / "effects"
    first = await _review(stores(), effects).invoke_async("the plan")
    legal, tech = first.interrupts
    inbox = stores()
    asked = await _rows(inbox)
    hold = HoldWrite("legal")
    wf = _review(stores(), effects, hold)
    resuming = asyncio.create_task(wf.resume_async({legal.id: "approve"}))
    await asyncio.wait_for(hold.inside.wait(), 30)  # legal's branch runs, inside its write
    await inbox.approvals.decide(asked[tech.id][0], "approve", decided_by="alice")
    hold.release.set()
    partial = await asyncio.wait_for(resuming, 30)
    wf.agent.close()
    assert [i.id for i in partial.interrupts] == [tech.id]
    assert effects_of(effects) == ["legal"]
    assert await _rows(inbox) == {
        legal.id: (asked[legal.id][0], "approved"),
        tech.id: (asked[tech.id][0], "approved"),  # alice's row: tech is not asked again
    }
    assert (await _statuses(inbox))["workflow"] == "ready"

    def factory(session_id: str) -> Agent:
        return _review(stores(), effects).agent

    config = WorkerConfig(poll=0.05, listen=False)
    done = await Worker(stores(), factory, config).run(once=True)
    assert [(o.session_id, o.outcome) for o in done] == [(SESSION, "completed")]
    assert effects_of(effects) == ["legal", "tech"]
    record = await inbox.load(SESSION)
    assert record is not None
    assert fold(record).messages[-1].text == '["legal wrote (ok legal)", "tech wrote (ok tech)"]'
