"""One trace across an AgentWorkflow, its activities and the human's wait, on the real
dev server, with no tether span exported twice when a new worker replays the run."""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tether.durable import SQLiteStore
from tether.errors import ConfigurationError
from tether.temporal import ANSWER_UPDATE, PROGRESS_QUERY, AgentWorkflow, TetherPlugin

APP = "temporal_app:agent_factory"
TETHER = ("invoke_agent", "chat", "execute_tool")


@pytest.fixture
async def store(private_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[SQLiteStore]:
    monkeypatch.setenv("TETHER_TEMPORAL_OUT", str(private_tmp / "sent.txt"))
    s = SQLiteStore(private_tmp / "tether.db")
    yield s
    await s.close()


async def waiting(handle: Any, seconds: float = 30.0, *, left: int | None = None) -> dict[str, Any]:
    """The workflow's progress once it waits (``left``: for that many interrupts)."""
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        progress: dict[str, Any] = await handle.query(PROGRESS_QUERY)
        if progress["status"] == "waiting" and left in (None, len(progress["interrupts"])):
            return progress
        assert asyncio.get_running_loop().time() < deadline, progress
        await asyncio.sleep(0.1)


async def test_one_trace_across_workflow_activities_and_wait_and_no_span_twice_after_replay(
    temporal_address: str, store: SQLiteStore
) -> None:
    from temporalio.client import Client
    from temporalio.worker import Replayer, Worker

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    queue, wid = f"tq-{uuid.uuid4().hex[:8]}", f"wf-trace-{uuid.uuid4().hex[:8]}"
    first = await Client.connect(
        temporal_address, plugins=[TetherPlugin(app=APP, store=store, tracer_provider=provider)]
    )
    async with Worker(first, task_queue=queue):
        handle = await first.start_workflow(
            AgentWorkflow.run, "write to ada", id=wid, task_queue=queue
        )
        (pending,) = (await waiting(handle))["interrupts"]
    before = Counter(s.name.split(" ")[0] for s in exporter.get_finished_spans())
    assert (before["invoke_agent"], before["chat"], before["execute_tool"]) == (1, 2, 2)
    # the first worker is gone: the next one has no cache and replays the run's history
    second = await Client.connect(
        temporal_address, plugins=[TetherPlugin(app=APP, store=store, tracer_provider=provider)]
    )
    async with Worker(second, task_queue=queue):
        answered = second.get_workflow_handle(wid)
        await answered.execute_update(ANSWER_UPDATE, args=[{pending["id"]: True}, "ops@test"])
        result = await asyncio.wait_for(answered.result(), 60)
    assert result["text"] == "done: sent to ada@example.com"

    spans = list(exporter.get_finished_spans())
    names = Counter(s.name for s in spans)
    assert names["invoke_agent tether"] == 2  # the first run (not again on replay), the resume
    assert sum(n for k, n in names.items() if k.startswith("chat ")) == 3
    assert (names["execute_tool lookup"], names["execute_tool send"]) == (1, 2)
    assert names["RunWorkflow:tether.AgentWorkflow"] == 1
    assert names["RunActivity:tether.model"] == 3
    assert names["RunActivity:tether.tool"] == 2
    assert len({s.context.span_id for s in spans}) == len(spans)

    (root,) = [s for s in spans if s.name == "StartWorkflow:tether.AgentWorkflow"]
    (update,) = [s for s in spans if s.name == f"StartWorkflowUpdate:{ANSWER_UPDATE}"]
    trace_id = root.context.trace_id
    elsewhere = {s.name for s in spans if s.context.trace_id != trace_id}
    # other callers' own calls: the progress queries, the answer (linked below)
    assert elsewhere == {
        update.name,
        "QueryWorkflow:tether.progress",
        "HandleQuery:tether.progress",
    }
    (handled,) = [s for s in spans if s.name == f"HandleUpdate:{ANSWER_UPDATE}"]
    assert [link.context.span_id for link in handled.links] == [update.context.span_id]
    ours = [s for s in spans if s.name.startswith(TETHER)]
    assert len(ours) == 8
    assert all(s.parent is not None for s in ours)
    first_run, resumed = sorted(
        (s for s in ours if s.name.startswith("invoke_agent")), key=lambda s: s.start_time or 0
    )
    assert first_run.parent is not None
    assert first_run.parent.span_id == root.context.span_id
    assert resumed.attributes is not None
    assert resumed.attributes["tether.resumed"] is True
    assert resumed.parent is not None  # the second worker replayed the first run quietly:
    assert resumed.parent.span_id == root.context.span_id  # its context is the workflow's

    # replaying the whole history (temporalio's Replayer) exports nothing of tether's
    exported = len(spans)
    replayer = Replayer(
        workflows=[], plugins=[TetherPlugin(app=APP, store=store, tracer_provider=provider)]
    )
    await replayer.replay_workflow(await answered.fetch_history())
    again = [s.name for s in exporter.get_finished_spans()][exported:]
    assert not [n for n in again if n.startswith(TETHER)], again
    provider.shutdown()


def test_tracing_takes_a_bool_or_none(store: SQLiteStore) -> None:
    with pytest.raises(ConfigurationError, match=r"tracing=\.\.\.\) takes True, False or None"):
        TetherPlugin(app=APP, store=store, tracing="yes")  # type: ignore[arg-type]
    assert TetherPlugin(app=APP, store=store, tracing=False).interceptors is None


async def test_turning_tracing_on_or_off_never_changes_a_workflows_history(
    temporal_address: str, store: SQLiteStore
) -> None:
    """Tracing in a workflow makes no store call (each would be a local activity in its
    history): a history made untraced replays traced and the other way round."""
    from temporalio.client import Client
    from temporalio.worker import Replayer, Worker

    provider = TracerProvider()
    histories = []
    for tracing in (False, True):
        queue, wid = f"tq-{uuid.uuid4().hex[:8]}", f"wf-onoff-{uuid.uuid4().hex[:8]}"
        plugin = TetherPlugin(app=APP, store=store, tracing=tracing, tracer_provider=provider)
        client = await Client.connect(temporal_address, plugins=[plugin])
        async with Worker(client, task_queue=queue):
            handle = await client.start_workflow(
                AgentWorkflow.run, "write to ada", id=wid, task_queue=queue
            )
            (pending,) = (await waiting(handle))["interrupts"]
            await handle.execute_update(ANSWER_UPDATE, args=[{pending["id"]: True}, None])
            assert (await handle.result())["stop_reason"] == "end_turn"
            histories.append(await handle.fetch_history())
    untraced, traced = histories
    for tracing, history in ((True, untraced), (False, traced)):
        plugin = TetherPlugin(app=APP, store=store, tracing=tracing, tracer_provider=provider)
        await Replayer(workflows=[], plugins=[plugin]).replay_workflow(history)
    provider.shutdown()


async def test_a_tree_in_a_workflow_is_one_trace_each_sub_agent_under_its_tool_call(
    temporal_address: str, store: SQLiteStore
) -> None:
    from temporalio.client import Client
    from temporalio.worker import Worker

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    queue, wid = f"tq-{uuid.uuid4().hex[:8]}", f"wf-tree-{uuid.uuid4().hex[:8]}"
    plugin = TetherPlugin(
        app="temporal_tree_app:agent_factory",
        store=store,
        forward_every=0.1,
        tracer_provider=provider,
    )
    client = await Client.connect(temporal_address, plugins=[plugin])
    async with Worker(client, task_queue=queue):
        handle = await client.start_workflow(AgentWorkflow.run, "plan it", id=wid, task_queue=queue)
        pending = (await waiting(handle, 60))["interrupts"]
        # one decision at a time (targeted resume): the first runs its coder, the second
        # the other (the counts below do not depend on how the forwarder's polls fall)
        first, second = await store.approvals.pending(session_id=wid)
        await store.approvals.decide(first.id, "approve", decided_by="ops@test")
        assert [i["id"] for i in (await waiting(handle, 60, left=1))["interrupts"]] == [
            second.interrupt_id
        ]
        await store.approvals.decide(second.id, "approve", decided_by="ops@test")
        result = await asyncio.wait_for(handle.result(), 90)
    assert len(pending) == 2
    assert result["stop_reason"] == "end_turn"
    spans = list(exporter.get_finished_spans())
    (root,) = [s for s in spans if s.name.startswith("StartWorkflow:")]
    ours = [s for s in spans if s.name.startswith(TETHER)]
    assert {s.context.trace_id for s in ours} == {root.context.trace_id}
    by_id = {s.context.span_id: s for s in spans}
    invoked = [s for s in ours if s.name.startswith("invoke_agent")]
    top = sorted(
        (s for s in invoked if (s.attributes or {})["gen_ai.conversation.id"] == wid),
        key=lambda s: s.start_time or 0,
    )
    assert [s.parent.span_id if s.parent else None for s in top] == [
        root.context.span_id,
        top[0].context.span_id,  # each resumed run continues the one it resumes
        top[1].context.span_id,
    ]
    subs = [s for s in invoked if "/" in str((s.attributes or {})["gen_ai.conversation.id"])]
    runs = Counter(str((s.attributes or {})["gen_ai.conversation.id"]).split("/")[-1] for s in subs)
    # the researcher runs, then resumes once per answer; each coder runs, then resumes
    # with its own answer only
    assert runs == {"researcher#1.p1": 3, "coder#1.k1": 2, "coder#1.k2": 2}
    for sub in subs:  # each under the tool call that ran it, first and resumed
        assert sub.parent is not None
        name = str((sub.attributes or {})["gen_ai.conversation.id"]).split("/")[-1]
        assert by_id[sub.parent.span_id].name == f"execute_tool {name.split('#')[0]}"
    provider.shutdown()


async def test_the_interceptors_spans_name_a_failure_by_its_type_only(
    temporal_address: str, store: SQLiteStore
) -> None:
    """A provider's error text (here quoting a key) never reaches a span unredacted: the
    activity's span says ApplicationError, nothing of the message."""
    from temporal_secret_app import SECRET
    from temporalio.client import Client, WorkflowFailureError
    from temporalio.worker import Worker

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    queue, wid = f"tq-{uuid.uuid4().hex[:8]}", f"wf-secret-{uuid.uuid4().hex[:8]}"
    plugin = TetherPlugin(
        app="temporal_secret_app:agent_factory", store=store, tracer_provider=provider
    )
    client = await Client.connect(temporal_address, plugins=[plugin])
    async with Worker(client, task_queue=queue):
        handle = await client.start_workflow(AgentWorkflow.run, "hello", id=wid, task_queue=queue)
        for _ in range(300):  # the model activity fails for good, once
            if any(s.name == "RunActivity:tether.model" for s in exporter.get_finished_spans()):
                break
            await asyncio.sleep(0.1)
        with pytest.raises(WorkflowFailureError):  # the run failed: the workflow fails, once
            await asyncio.wait_for(handle.result(), 60)
    spans = list(exporter.get_finished_spans())
    (failed,) = [s for s in spans if s.name == "RunActivity:tether.model"]
    assert failed.status.description == "ApplicationError"
    assert SECRET not in "\n".join(s.to_json() for s in spans)
    provider.shutdown()
