"""The Conversation: per-session data apart from the Agent's configuration."""

from __future__ import annotations

import re
from pathlib import Path

import tether
from tether import Agent, Conversation, Message, tool
from tether.durable import SQLiteStore
from tether.models import ScriptedModel

SRC = Path(tether.__file__).parent


def test_no_module_but_agent_py_touches_an_agent_private_attribute() -> None:
    private = {
        m.group(1) for m in re.finditer(r"self\.(_[a-z]\w*)", (SRC / "agent.py").read_text())
    }
    offenders = []
    for path in SRC.rglob("*.py"):
        if path.name == "agent.py" and path.parent == SRC:
            continue
        text = path.read_text()
        for name in private:
            for match in re.finditer(rf"\bagent\.{name}\b", text):
                line = text.count("\n", 0, match.start()) + 1
                offenders.append(f"{path.relative_to(SRC)}:{line}: agent.{name}")
    assert offenders == []


def test_agent_views_read_and_write_the_conversation() -> None:
    agent = Agent(model=ScriptedModel(["hello", "again"]), state={"n": 1})
    conversation = agent.conversation
    assert isinstance(conversation, Conversation)
    agent("hi")
    assert agent.messages is conversation.messages
    assert [m.role for m in conversation.messages] == ["user", "assistant"]
    assert agent.state is conversation.state == {"n": 1}
    assert agent.last_result is conversation.last_result
    assert agent.session_id == conversation.session_id
    agent.messages = [Message.user("replaced")]
    assert conversation.messages[0].text == "replaced"


def test_reset_clears_the_conversation_and_keeps_an_explicit_session_id() -> None:
    anonymous = Agent(model=ScriptedModel(["a", "b"]))
    anonymous("hi")
    first = anonymous.session_id
    anonymous.reset()
    assert anonymous.messages == []
    assert anonymous.last_result is None
    assert anonymous.session_id != first
    named = Agent(model=ScriptedModel(["a"]), session_id="keep", store=None)
    named("hi")
    named.reset()
    assert named.session_id == "keep"
    assert named.messages == []


def test_the_run_is_visible_on_the_conversation_only_while_it_runs() -> None:
    seen = []

    @tool
    def probe() -> str:
        """Look at the running agent."""
        seen.append(agent.conversation.run is not None)
        return "ok"

    turns = [{"tool_calls": [{"name": "probe", "args": {}}]}, "done"]
    agent = Agent(model=ScriptedModel(turns), tools=[probe])
    agent("go")
    assert seen == [True]
    assert agent.conversation.run is None


def test_a_second_process_view_is_adopted_from_the_journal(tmp_path: Path) -> None:
    db = str(tmp_path / "t.db")
    writer = Agent(model=ScriptedModel(["one"]), store=SQLiteStore(db), session_id="s")
    writer("first")
    reader = Agent(model=ScriptedModel(["two"]), store=SQLiteStore(db), session_id="s")
    assert reader.messages == []  # nothing is loaded before a run
    reader("second")
    assert [m.text for m in reader.messages] == ["first", "one", "second", "two"]
    assert reader.conversation.synced_version > 0
    assert reader.conversation.synced_state is not None
