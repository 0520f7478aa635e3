"""The todo list is re-injected after a compression: the model's next request carries it."""

from __future__ import annotations

from typing import Any

from tether import Agent, Execution
from tether.context import Compaction, ContextManager, SlidingWindow, Summarizing
from tether.context.compaction import SUMMARY_MARK
from tether.context.todo_note import TODO_MARK, todo_note, with_todo_note
from tether.control import BeforeContextCompression
from tether.messages import Message
from tether.models import ScriptedModel
from tether.models.base import ModelRequest
from tether.tools import todo
from tether.tools.todo import TODO_KEY

from .long_run import lookup

PLAN = ["read the records", "write the \x1b[31mreport\u202e"]
OPEN_LINES = "- [>] 1. read the records (in_progress)\n- [ ] 2. write the [31mreport (pending)"


def planner(turns: int, finish_at: int | None = None) -> Any:
    """Plan two tasks, start the first, then ``turns`` lookups; at lookup ``finish_at``
    the first task is marked completed in the same turn."""

    def play(messages: list[Message], specs: list[dict[str, Any]]) -> Any:
        last = messages[-1]
        if last.role != "tool":
            return {"tool_calls": [{"name": "todo", "args": {"action": "create", "items": PLAN}}]}
        done = [r for r in last.tool_results if r.name == "lookup"]
        if not done:
            if "in_progress" not in last.tool_results[0].content:
                start = {"action": "update", "id": "1", "status": "in_progress"}
                return {"tool_calls": [{"name": "todo", "args": start}]}
            n = 0
        else:
            n = int(done[0].content.split(":", 1)[0].split()[-1]) + 1
        if n >= turns:
            return f"done after {n} lookups"
        calls: list[dict[str, Any]] = [{"name": "lookup", "args": {"n": n}}]
        if n == finish_at:
            finish = {"action": "update", "id": "1", "status": "completed"}
            calls.append({"name": "todo", "args": finish})
        return {"tool_calls": calls}

    return play


def summariser() -> ScriptedModel:
    return ScriptedModel(
        lambda messages, specs: f"summary of {messages[-1].text.count('called lookup')} lookups",
        name="summariser",
        record_requests=True,
    )


def agent(
    turns: int, *, context: ContextManager | None = None, finish_at: int | None = None, **kw: Any
) -> Agent:
    model = ScriptedModel(
        planner(turns, finish_at),
        name="planner",
        context_window=4_000,
        overflow_at=4_000,
        record_requests=True,
    )
    kw.setdefault("store", None)
    return Agent(
        model,
        tools=[todo(), lookup],
        execution=Execution(context=context or Summarizing(summariser())),
        limits=None,  # a long run on purpose
        **kw,
    )


def requests(agent: Agent) -> list[ModelRequest]:
    model = agent.model
    assert isinstance(model, ScriptedModel)
    return model.requests


def compressed(agent: Agent) -> list[ModelRequest]:
    """The requests whose view holds a summary or marker (after a compression)."""
    return [r for r in requests(agent) if len(r.messages) > 1 and "[tether: " in r.messages[1].text]


def test_the_first_request_after_a_compression_carries_the_open_items() -> None:
    planned = agent(60)
    result = planned("look up the records")
    assert result.text == "done after 60 lookups"
    assert result.usage.compressions >= 1
    first = compressed(planned)[0]
    summary = first.messages[1].text
    assert summary.startswith(SUMMARY_MARK)
    assert summary.endswith(
        f"\n\n{TODO_MARK}\n{OPEN_LINES}\nThe todo tool (action list) shows every item."
    )
    # the plan itself was compressed away: only the note tells the model about it
    assert not any(r.name == "todo" for m in first.messages[2:] for r in m.tool_results), (
        "the todo calls should be inside the compressed part"
    )
    assert "\x1b" not in summary
    assert "\u202e" not in summary
    # the transcript keeps the text as the model gave it
    assert planned.state[TODO_KEY]["items"][1]["text"] == PLAN[1]


def test_a_later_compression_shows_the_list_as_it_is_then_and_not_the_stale_one() -> None:
    sums = summariser()
    planned = agent(120, context=Summarizing(sums), finish_at=40)
    planned("look up the records")
    notes = [r.messages[1].text for r in compressed(planned)]
    before = [n for n in notes if "(in_progress)" in n]
    after = [n for n in notes if "Completed (not shown): 1" in n]
    assert before
    assert after
    assert after[-1].endswith(
        f"{TODO_MARK}\n- [ ] 2. write the [31mreport (pending)\nCompleted (not shown): 1\n"
        "The todo tool (action list) shows every item."
    )
    assert all(n.count(TODO_MARK) == 1 for n in notes)
    # the summariser writes from the earlier summary without its (stale) note
    assert len(sums.requests) >= 2
    assert not any(TODO_MARK in r.messages[-1].text for r in sums.requests)


def test_no_list_no_note() -> None:
    calls = [0]

    def play(messages: list[Message], specs: list[dict[str, Any]]) -> Any:
        calls[0] += 1
        n = calls[0]
        return "done" if n > 60 else {"tool_calls": [{"name": "lookup", "args": {"n": n}}]}

    model = ScriptedModel(play, name="plain", context_window=4_000, record_requests=True)
    plain = Agent(
        model,
        tools=[todo(), lookup],  # the tool is there, but no list was ever made
        execution=Execution(context=Summarizing(summariser())),
        limits=None,
        store=None,
    )
    assert plain("go").usage.compressions >= 1
    assert any(r.messages[1].text.startswith(SUMMARY_MARK) for r in model.requests[1:])
    assert not any(TODO_MARK in m.text for r in model.requests for m in r.messages)
    assert todo_note({"next": 3, "items": []}) is None  # emptied by clear: nothing to show
    assert todo_note(["not a list"]) is None  # malformed: the compression goes on without it


def test_a_sliding_window_marker_and_a_manager_without_a_summary_get_the_note() -> None:
    sliding = agent(50, context=SlidingWindow(10))
    sliding("look up the records")
    marker = compressed(sliding)[0].messages[1].text
    assert marker.startswith("[tether: earlier messages omitted]")
    assert f"{TODO_MARK}\n{OPEN_LINES}" in marker

    class Silent(SlidingWindow):
        async def compress(self, request):  # type: ignore[no-untyped-def]
            made = await super().compress(request)
            return None if made is None else Compaction(made.start, made.end, None)

    silent = agent(50, context=Silent(10))
    silent("look up the records")
    note = next(
        r.messages[1] for r in requests(silent)[1:] if r.messages[1].text.startswith(TODO_MARK)
    )
    assert note.role == "user"
    assert OPEN_LINES in note.text


def test_a_summary_handed_back_again_keeps_one_current_note() -> None:
    stored = {"next": 2, "items": [{"id": "1", "text": "plan", "status": "pending"}]}
    first = with_todo_note(Compaction(1, 5, Message.user(f"{SUMMARY_MARK}\nolder")), stored)
    done = {"next": 2, "items": [{"id": "1", "text": "plan", "status": "completed"}]}
    again = with_todo_note(Compaction(1, 7, first.summary), done)
    assert again.summary is not None
    assert again.summary.text.count(TODO_MARK) == 1
    assert again.summary.text.startswith(f"{SUMMARY_MARK}\nolder\n\n{TODO_MARK}\n")
    assert "Completed (not shown): 1" in again.summary.text
    assert with_todo_note(first, stored) == first  # the same list: the same compaction


def test_the_compression_hook_sees_the_note_and_may_rewrite_it() -> None:
    planned = agent(60)
    seen: list[str] = []

    @planned.on(BeforeContextCompression)
    def look(event: BeforeContextCompression) -> None:
        assert event.summary is not None
        seen.append(event.summary.text)
        event.summary = Message.user(f"{SUMMARY_MARK}\nmine")

    planned("look up the records")
    assert seen
    assert TODO_MARK in seen[0]
    assert compressed(planned)[0].messages[1].text.endswith("mine")


async def test_after_compression_and_resume_elsewhere_the_view_still_carries_the_list(
    stores,  # type: ignore[no-untyped-def]
) -> None:
    first = agent(60, store=stores(), session_id="todo-long")
    assert (await first.invoke_async("look up the records")).usage.compressions >= 1
    journaled = first.conversation.compaction
    assert journaled is not None
    assert journaled.summary is not None
    assert f"{TODO_MARK}\n{OPEN_LINES}" in journaled.summary.text

    def another_process(window: int) -> tuple[Agent, ScriptedModel, ScriptedModel]:
        # a new store object and agent on the same session, as a new process would make
        sums = summariser()
        model = ScriptedModel(
            lambda m, s: "still on it", context_window=window, record_requests=True
        )
        resumed = Agent(
            model,
            tools=[todo(), lookup],
            execution=Execution(context=Summarizing(sums)),
            store=stores(),
            session_id="todo-long",
        )
        return resumed, model, sums

    # a window the history fits: the journaled view, note included, is sent as it was
    roomy, model, sums = another_process(100_000)
    assert (await roomy.invoke_async("where are we?")).text == "still on it"
    [sent] = model.requests
    assert sent.messages[1] == journaled.summary
    assert sums.requests == []  # rebuilt from the journal, no second summarising call
    assert roomy.state[TODO_KEY] == first.state[TODO_KEY]

    # the first agent's small window: the resumed history is over it, so the first call
    # compresses again (preflight), and the new summary carries the list too
    tight, model, sums = another_process(4_000)
    await tight.invoke_async("and now?")
    assert len(sums.requests) == 1
    summary = model.requests[0].messages[1].text
    assert summary.startswith(SUMMARY_MARK)
    assert summary.count(TODO_MARK) == 1
    assert f"{TODO_MARK}\n{OPEN_LINES}" in summary
