"""``wf.as_tool(...)``: a workflow built with ``store=`` or ``session_id=`` is refused (a
tool runs it in the calling agent's session tree and store, so they would be dropped);
one built without them runs as a child session of the caller."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from tether import Agent, ConfigurationError
from tether.durable import MemoryStore, SQLiteStore
from tether.models import ScriptedModel
from tether.workflows import Sequential

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from workflow_agents import echo


def _flow(**options: Any) -> Sequential:
    return Sequential(Agent(echo("a"), name="a"), Agent(echo("b"), name="b"), **options)


@pytest.mark.parametrize(
    ("options", "built"),
    [
        ({"store": "memory"}, "store="),
        ({"session_id": "flow-1"}, "session_id="),
        ({"store": "memory", "session_id": "flow-1"}, "session_id= and store="),
    ],
)
def test_a_workflow_with_its_own_store_or_session_is_refused_as_a_tool(
    options: dict[str, Any], built: str
) -> None:
    store = MemoryStore()
    if "store" in options:
        options = {**options, "store": store}
    flow = _flow(**options)
    with pytest.raises(ConfigurationError) as refused:
        flow.as_tool("flow")
    assert str(refused.value) == (
        f"wf.as_tool('flow'): this workflow was built with {built}, which a tool cannot "
        "use: each call runs the workflow as a child session in the calling agent's session "
        "tree and store. Build the workflow without them (give the store to the agent that "
        "calls the tool), or run it on its own with wf.run(...)"
    )
    # nothing was lost: the workflow still runs on its own, in its own session
    assert flow.run("go").text == "b: a: go"


async def test_a_workflow_without_them_runs_as_a_child_session_of_the_caller(
    tmp_path: Path,
) -> None:
    store = SQLiteStore(tmp_path / "t.db")

    def turn(messages: list[Any], specs: list[Any]) -> Any:
        if messages[-1].role == "tool":
            return "lead: " + messages[-1].tool_results[0].content
        return {"tool_calls": [{"id": "c1", "name": "flow", "args": {"task": "go"}}]}

    lead = Agent(
        ScriptedModel(turn), tools=[_flow().as_tool("flow")], store=store, session_id="lead"
    )
    assert (await lead.invoke_async("start")).text == "lead: b: a: go"
    sessions = {s.session_id for s in await store.list_sessions()}
    assert "lead" in sessions
    assert any(s.startswith("lead/flow#") for s in sessions)  # the call's child session
    await store.close()
