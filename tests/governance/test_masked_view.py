"""masked_view carries the whole view: the end entry's stop_reason / end_reason (the
reason scrubbed like every text), the compaction (its summary masked) and the system
prompt, not only the messages and interrupts."""

from __future__ import annotations

from quoting_tree import CARD, PLAIN, hide_card, pay_agent

from tether.context.compaction import Compaction
from tether.durable import MemoryStore
from tether.governance.masks import Masker
from tether.governance.redaction import masked_view, show_session
from tether.messages import Message
from tether.session import SessionView, fold


async def test_a_shown_session_keeps_its_end_entrys_stop_reason() -> None:
    store = MemoryStore()
    await pay_agent(store=store, session_id="p").invoke_async("go")
    record = await store.load("p")
    assert record is not None
    view = fold(record)
    assert view.stop_reason == "end_turn"
    shown = show_session(record, view, redactor=hide_card).view
    assert shown.stop_reason == "end_turn"
    assert shown.end_reason == view.end_reason
    assert CARD not in str([m.to_dict() for m in shown.messages])


def test_masked_view_scrubs_the_end_reason_and_the_compaction_summary() -> None:
    masker = Masker(hide_card, {})
    masker.learn("charge", {"card": CARD, "memo": PLAIN})
    summary = Message.user(f"[summary] charged {CARD} for {PLAIN}")
    view = SessionView(
        messages=[Message.user("go")],
        stop_reason="limit_tool_calls",
        end_reason=f"stopped after charging {CARD}",
        compaction=Compaction(0, 0, summary),
        system_prompt=f"never repeat {CARD}",
        system_prompt_known=True,
        session_id="s",
    )
    shown = masked_view(masker, view)
    assert shown.stop_reason == "limit_tool_calls"
    assert shown.end_reason == "stopped after charging ***"
    assert shown.compaction is not None
    assert shown.compaction.summary is not None
    assert shown.compaction.summary.text == f"[summary] charged *** for {PLAIN}"
    assert (shown.compaction.start, shown.compaction.end) == (0, 0)
    assert shown.system_prompt == "never repeat ***"
    assert shown.system_prompt_known
    assert shown.session_id == "s"
