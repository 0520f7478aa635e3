"""The todo tool: the session's task list in the journaled state, bounded, governed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tether import Agent
from tether.control import BeforeToolCall, Deny, InterventionHandler
from tether.durable import SQLiteStore
from tether.models import ScriptedModel
from tether.tools import todo
from tether.tools.todo import MAX_ITEMS, MAX_TEXT, TODO_KEY


def call(action: str, **args: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": "todo", "args": {"action": action, **args}}]}


def agent_for(*turns: Any, **options: Any) -> Agent:
    """An agent that makes the given todo calls, then answers with the last tool result."""

    def play(messages: list[Any], specs: list[Any]) -> Any:
        asked = max(i for i, m in enumerate(messages) if m.role == "user")  # this prompt
        made = sum(1 for m in messages[asked:] if m.role == "assistant")
        if made < len(turns):
            return turns[made]
        return "done: " + messages[-1].tool_results[0].content

    return Agent(model=ScriptedModel(play), tools=[todo()], **options)


def results(agent: Agent) -> list[str]:
    return [r.content for m in agent.messages for r in m.tool_results]


def test_create_update_list_and_clear_keep_ids_stable() -> None:
    agent = agent_for(
        call("create", items=["read the spec", "write the parser", "test it"]),
        call("update", id="2", status="in_progress"),
        call("update", id="1", status="completed"),
        call("clear"),
        call("create", items=["ship it"]),
        call("update", id=3, status="cancelled"),  # an int id is taken as its text
        call("list"),
    )
    result = agent("plan the work")
    shown = results(agent)
    assert shown[0] == (
        "Task list (3 pending; room for 47 more):\n"
        "- [ ] 1. read the spec (pending)\n"
        "- [ ] 2. write the parser (pending)\n"
        "- [ ] 3. test it (pending)"
    )
    assert "- [>] 2. write the parser (in_progress)" in shown[1]
    assert "- [x] 1. read the spec (completed)" in shown[2]
    assert "1. read the spec" not in shown[3]  # cleared: finished items leave the list
    assert "- [ ] 4. ship it (pending)" in shown[4]  # ids are never reused
    assert result.text == (
        "done: Task list (1 pending, 1 in_progress, 1 cancelled; room for 47 more):\n"
        "- [>] 2. write the parser (in_progress)\n"
        "- [~] 3. test it (cancelled)\n"
        "- [ ] 4. ship it (pending)"
    )
    assert agent.state[TODO_KEY] == {
        "next": 5,
        "items": [
            {"id": "2", "text": "write the parser", "status": "in_progress"},
            {"id": "3", "text": "test it", "status": "cancelled"},
            {"id": "4", "text": "ship it", "status": "pending"},
        ],
    }


def test_an_empty_list_says_so_and_the_tool_is_opt_in() -> None:
    agent = agent_for(call("list"))
    assert (
        agent("what is left?").text == f"done: The task list is empty (room for {MAX_ITEMS} items)."
    )
    assert TODO_KEY not in agent.state  # listing writes nothing
    assert "todo" not in Agent(model=ScriptedModel(["hi"])).tool_map


def test_the_export_stays_the_function_once_its_module_is_loaded() -> None:
    import tether.context.step  # imports tether.tools.todo, the module
    import tether.tools

    assert tether.tools.todo is todo
    assert callable(tether.tools.todo)
    assert tether.context.step is not None


def test_going_over_the_item_cap_says_how_much_room_is_left_and_saves_nothing() -> None:
    agent = agent_for(
        call("create", items=[f"task {n}" for n in range(48)]),
        call("update", id="1", status="completed"),
        call("create", items=["one", "two", "three"]),
    )
    agent("plan")
    error = results(agent)[2]
    assert error.startswith("Error: ToolArgumentError: ")
    assert (
        "the list holds at most 50 items and has 48: room for 2 more, 3 asked for; nothing "
        "was created; clear removes the 1 finished one(s)"
    ) in error
    assert len(agent.state[TODO_KEY]["items"]) == 48
    assert agent.state[TODO_KEY]["next"] == 49


def test_a_text_over_the_limit_says_by_how_much_and_saves_nothing() -> None:
    agent = agent_for(
        call("create", items=["fine"]),
        call("create", items=["ok", "x" * (MAX_TEXT + 34)]),
        call("create", items=["ok", "  "]),
    )
    agent("plan")
    over, empty = results(agent)[1:]
    assert f"item 2 has {MAX_TEXT + 34} characters, 34 over the {MAX_TEXT} an item holds" in over
    assert "nothing was created" in over
    assert "item 2 is empty; nothing was created" in empty
    assert agent.state[TODO_KEY] == {
        "next": 2,
        "items": [{"id": "1", "text": "fine", "status": "pending"}],
    }


def test_bad_updates_name_what_is_wrong() -> None:
    agent = agent_for(
        call("create", items=["a", "b"]),
        call("update", id="9", status="completed"),
        call("update", id="1"),
        call("create"),
        call("update", id="1", status="finished"),
    )
    agent("plan")
    unknown, no_status, no_items, bad_status = results(agent)[1:]
    assert "no item has id '9'; the ids are 1, 2" in unknown
    assert "todo update needs `id` (an item's id) and `status`" in no_status
    assert "todo create needs `items`" in no_items
    assert bad_status.startswith("Error: ")
    assert "status" in bad_status
    assert [i["status"] for i in agent.state[TODO_KEY]["items"]] == ["pending", "pending"]


def test_item_text_is_stored_as_given_and_shown_without_control_characters() -> None:
    hostile = "fix \x1b[2Jthe\u202e bug\nnow\u200b\x07"
    agent = agent_for(call("create", items=[hostile]), call("list"))
    result = agent("plan")
    assert agent.state[TODO_KEY]["items"][0]["text"] == hostile.strip()
    for text in (results(agent)[0], result.text):
        assert "- [ ] 1. fix [2Jthe bug now (pending)" in text
        assert not any(c in text for c in "\x1b\u202e\u200b\x07")


def test_a_malformed_stored_list_is_a_tool_error_and_left_as_it_is() -> None:
    agent = agent_for(call("create", items=["a"]), state={TODO_KEY: ["not", "a", "list"]})
    agent("plan")
    [error] = results(agent)
    assert "the session state's '__tether_todo__' is not a task list (a list, not a dict)" in error
    assert agent.state[TODO_KEY] == ["not", "a", "list"]


async def test_a_deny_policy_on_todo_stops_it_and_hooks_and_the_audit_see_it(stores) -> None:  # type: ignore[no-untyped-def]
    class NoPlans(InterventionHandler):
        def before_tool_call(self, event: BeforeToolCall) -> Deny | None:
            return Deny("no task lists here") if event.tool_call.name == "todo" else None

    store = stores()
    agent = agent_for(
        call("create", items=["a"]), interventions=[NoPlans()], store=store, session_id="deny"
    )
    seen: list[str] = []
    agent.on(BeforeToolCall)(lambda event: seen.append(event.tool_call.name))
    result = await agent.invoke_async("plan")
    assert result.text == "done: Denied: denied by policy 'NoPlans': no task lists here"
    assert seen == ["todo"]
    assert TODO_KEY not in agent.state
    records = await store.audit.records(session_id="deny")
    [verdict] = [r.data for r in records if r.event == "policy.verdict"]
    assert verdict["tool"] == "todo"
    assert (verdict["policy"], verdict["action"]) == ("NoPlans", "Deny")
    [executed] = [r.data for r in records if r.event == "tool.executed"]
    assert (executed["tool"], executed["status"]) == ("todo", "denied")


CHILD = """
import sys
from tether import Agent
from tether.durable import SQLiteStore
from tether.models import ScriptedModel
from tether.tools import todo

def play(messages, specs):
    if messages[-1].role == "tool":
        return messages[-1].tool_results[0].content
    return {"tool_calls": [{"name": "todo", "args": {"action": "update", "id": "2",
                                                     "status": "in_progress"}}]}

agent = Agent(model=ScriptedModel(play), tools=[todo()], store=SQLiteStore(sys.argv[1]),
              session_id="plan-2")
print(agent("carry on").text)
"""


def test_another_process_sees_the_list_and_goes_on_with_the_same_ids(tmp_path: Path) -> None:
    db = str(tmp_path / "todo.db")
    first = agent_for(
        call("create", items=["read the spec", "write the parser"]),
        call("update", id="1", status="completed"),
        store=SQLiteStore(db),
        session_id="plan-2",
    )
    first("plan the work")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    child = subprocess.run(
        [sys.executable, "-c", CHILD, db],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert child.returncode == 0, child.stderr
    assert child.stdout.strip() == (
        "Task list (1 in_progress, 1 completed; room for 48 more):\n"
        "- [x] 1. read the spec (completed)\n"
        "- [>] 2. write the parser (in_progress)"
    )


async def test_the_list_survives_a_resume_with_a_new_store_object(stores) -> None:  # type: ignore[no-untyped-def]
    first = agent_for(
        call("create", items=["read the spec", "write the parser"]),
        call("update", id="1", status="completed"),
        store=stores(),
        session_id="plan-1",
    )
    await first.invoke_async("plan the work")
    # a new Agent on a new store object (as in another process), same session id
    second = agent_for(call("list"), store=stores(), session_id="plan-1")
    result = await second.invoke_async("what is left?")
    assert second.state[TODO_KEY] == first.state[TODO_KEY]
    assert result.text.endswith(
        "- [x] 1. read the spec (completed)\n- [ ] 2. write the parser (pending)"
    )
    records = await stores().audit.records(session_id="plan-1")
    executed = [r.data for r in records if r.event == "tool.executed"]
    assert [e["tool"] for e in executed] == ["todo", "todo", "todo"]
