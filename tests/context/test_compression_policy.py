"""An InterventionHandler at ``before_context_compression``: veto (Deny) or replace
(Transform) a compression, audited as a PolicyVerdict like every other verdict."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tether import HookError
from tether.context import Summarizing
from tether.context.compaction import SUMMARY_MARK
from tether.control import (
    BeforeContextCompression,
    BeforeModelCall,
    Confirm,
    ConfirmRequest,
    Deny,
    Guide,
    InterventionHandler,
    Transform,
)
from tether.durable import SQLiteStore
from tether.errors import ContextOverflowError
from tether.events import ContextCompressed
from tether.messages import Message
from tether.models import ProviderError, ScriptedModel

from .long_run import long_agent, summariser


class Policy(InterventionHandler):
    """Answers every compression with ``action``; keeps the events it saw."""

    def __init__(self, action: Any, name: str = "") -> None:
        self.action = action
        self.name = name
        self.seen: list[BeforeContextCompression] = []

    def before_context_compression(self, event: BeforeContextCompression) -> Any:
        self.seen.append(event)
        return self.action


def requests(agent: Any) -> list[Any]:
    model = agent.model
    assert isinstance(model, ScriptedModel)
    return model.requests


def test_only_the_compression_point_is_registered() -> None:
    agent = long_agent(2, interventions=[Policy(None)])
    assert agent.hooks.has(BeforeContextCompression)
    assert not agent.hooks.has(BeforeModelCall)
    plain = long_agent(2, interventions=[InterventionHandler()])
    assert not plain.hooks.has(BeforeContextCompression)


def test_transform_replaces_the_summary_the_model_sees() -> None:
    mine = Message.user(f"{SUMMARY_MARK}\nthe policy's own summary")
    policy = Policy(Transform(lambda summary: mine))
    agent = long_agent(60, interventions=[policy])

    async def run() -> list[Any]:
        return [e async for e in agent.stream("go")]

    events = asyncio.run(run())
    compressed = [e for e in events if isinstance(e, ContextCompressed)]
    assert compressed
    assert len(policy.seen) == len(compressed)
    assert policy.seen[0].summary is not None
    assert "summary of" in policy.seen[0].summary.text  # what the manager made
    assert all(e.summary == mine for e in compressed)
    assert requests(agent)[-1].messages[1] == mine
    assert agent.last_result is not None
    assert agent.last_result.stop_reason == "end_turn"
    assert agent.last_result.usage.compressions == len(compressed)


def test_transform_to_none_leaves_no_stand_in() -> None:
    agent = long_agent(60, interventions=[Policy(Transform(lambda summary: None))])
    result = agent("go")
    assert result.usage.compressions >= 1
    last = requests(agent)[-1].messages
    assert last[0].text == "go"
    assert not last[1].text.startswith(SUMMARY_MARK)  # the middle is gone, nothing instead


def test_deny_keeps_the_view_while_it_fits_and_holds_for_the_run() -> None:
    # no provider limit: the compression is vetoed and the run still ends
    summarising = summariser()
    policy = Policy(Deny("keep every word"), name="keep-all")
    agent = long_agent(
        60, overflow_at=None, interventions=[policy], context=Summarizing(summarising)
    )
    result = agent("go")
    assert result.stop_reason == "end_turn"
    assert result.usage.compressions == 0
    # asked once: the later calls past the threshold make no summary only to have it refused
    assert [e.reason for e in policy.seen] == ["threshold"]
    assert summarising.calls == 1
    agent("again")  # a new run asks again
    assert [e.reason for e in policy.seen] == ["threshold", "preflight"]
    assert len(requests(agent)[-1].messages) == len(agent.messages) - 1  # the whole transcript


def test_a_veto_that_leaves_the_request_over_the_window_is_a_clear_error() -> None:
    policy = Policy(Deny("keep every word"), name="keep-all")
    agent = long_agent(300, interventions=[policy])
    with pytest.raises(ContextOverflowError) as info:
        agent("go")
    message = str(info.value)
    assert "'long'" in message  # the model
    assert "context_overflow" in message
    assert "vetoed (denied by policy 'keep-all': keep every word)" in message
    assert "larger context window" in message  # what to do next
    assert isinstance(info.value.__cause__, ProviderError)
    assert info.value.result is not None
    assert info.value.result.stop_reason == "error"
    # bounded: the threshold asks once, the refusal asks again and fails without a retry
    assert [e.reason for e in policy.seen] == ["threshold", "overflow"]
    model = agent.model
    assert isinstance(model, ScriptedModel)
    assert len(requests(agent)) == model.calls + 1  # the refused request, not retried
    # nothing lost: the transcript holds every lookup made before the refusal
    assert agent.messages[0].text == "go"
    assert len(agent.messages) == 1 + 2 * model.calls


def test_a_veto_and_a_replacement_are_audited_as_policy_verdicts(tmp_path: Path) -> None:
    store = SQLiteStore(str(tmp_path / "audit.db"))
    mine = Message.user(f"{SUMMARY_MARK}\nreplaced")
    replacing = long_agent(
        60, store=store, session_id="rep", interventions=[Policy(Transform(lambda s: mine))]
    )
    replacing("go")
    vetoing = long_agent(
        300, store=store, session_id="veto", interventions=[Policy(Deny("no"), name="keep")]
    )
    with pytest.raises(ContextOverflowError):
        vetoing("go")

    async def verdicts(session: str) -> list[dict[str, Any]]:
        records = await store.audit.records(session_id=session)
        return [r.data for r in records if r.event == "policy.verdict"]

    replaced = asyncio.run(verdicts("rep"))
    assert replaced
    assert replaced[0] == {
        "point": "before_context_compression",
        "policy": "Policy",
        "action": "Transform",
    }
    denied = asyncio.run(verdicts("veto"))
    assert denied[-1] == {"point": "before_context_compression", "policy": "keep", "action": "Deny"}
    assert asyncio.run(store.audit.verify()).ok


def test_confirm_asks_the_callback_and_without_one_fails_closed() -> None:
    asked: list[ConfirmRequest] = []

    def approve(request: ConfirmRequest) -> bool:
        asked.append(request)
        return True

    agent = long_agent(60, interventions=[Policy(Confirm("compress?"))], confirm=approve)
    assert agent("go").usage.compressions >= 1
    assert asked[0].point == "before_context_compression"
    assert asked[0].tool_call is None

    unattended = long_agent(60, overflow_at=None, interventions=[Policy(Confirm("compress?"))])
    result = unattended("go")
    assert result.usage.compressions == 0  # nobody to say yes: the view is kept


def test_guide_is_refused_with_what_to_return_instead() -> None:
    agent = long_agent(60, interventions=[Policy(Guide("shorter"))])
    with pytest.raises(HookError) as info:
        agent("go")
    assert "Guide is not an action at before_context_compression" in str(info.value)
    assert "Deny" in str(info.value)
    assert "Transform" in str(info.value)


def test_a_transform_returning_the_wrong_type_is_a_hook_error() -> None:
    agent = long_agent(60, interventions=[Policy(Transform(lambda s: "text"), name="bad")])
    with pytest.raises(HookError) as info:
        agent("go")
    assert "'bad'" in str(info.value)
    assert "before_context_compression returned str, expected Message" in str(info.value)
    assert agent.messages[0].text == "go"  # the transcript is kept
