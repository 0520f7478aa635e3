"""The first prompt of each session in ``store.session_page`` (every store): bounded,
on one line, redacted like ``sessions show``."""

from __future__ import annotations

from typing import Any

from ops_agents import SECRET, AskFirst, transfer_agent

from tether import Agent, tool
from tether.control.audit import ApprovalPolicy
from tether.durable import Store
from tether.durable.session_prompt import PROMPT_MAX, READ_MAX, prompt_text
from tether.governance.masks import redact_secrets
from tether.governance.redaction import show_session
from tether.models import ScriptedModel
from tether.session import fold


async def _page(store: Store) -> dict[str, Any]:
    return {s.session_id: s for s in (await store.session_page()).sessions}


async def test_the_first_prompt_is_one_bounded_line(stores):
    store = stores()
    await Agent(model=ScriptedModel(["ok"]), store=store, session_id="p1").invoke_async(
        "please  deploy\n\tthe\x1b[2J thing"
    )
    await Agent(model=ScriptedModel(["ok"]), store=store, session_id="long").invoke_async(
        "x" * 50_000
    )
    await store.create("empty")
    page = await _page(stores())  # another store object: what a new process reads
    assert page["p1"].first_prompt == "please deploy the\x1b[2J thing"  # escaped by viewers
    long = page["long"].first_prompt
    assert long == "x" * (PROMPT_MAX - 1) + "…"
    assert page["empty"].first_prompt is None
    assert page["p1"].model_calls == 1


async def test_a_secret_a_tool_call_hides_is_hidden_in_the_prompt(stores):
    store = stores()
    agent = transfer_agent(store, "pay", [])
    await agent.invoke_async(f"pay bob 500 with token {SECRET} please")
    [row] = (await stores().session_page()).sessions
    assert row.first_prompt == "pay bob 500 with token *** please"
    record = await store.load("pay")
    assert record is not None
    shown = show_session(record, fold(record), await store.approvals.find(session_id="pay"))
    assert shown.view.messages[0].text == row.first_prompt  # the same as sessions show


async def test_with_the_agents_redactor_the_prompt_matches_sessions_show(stores):
    store = stores()

    def hide_to(tool_name: str | None, args: dict[str, Any]) -> dict[str, Any]:
        return {**redact_secrets(tool_name, args), "to": "<hidden>"}

    policy = ApprovalPolicy(redactor=hide_to)
    await transfer_agent(store, "r", [], approvals=policy).invoke_async("send it to bob now")
    [row] = (await stores().session_page()).sessions
    assert row.first_prompt is not None
    record = await store.load("r")
    assert record is not None
    shown = show_session(record, fold(record), await store.approvals.find(session_id="r"))
    assert shown.view.messages[0].text == row.first_prompt


def test_a_prompt_cut_by_the_read_bound_still_decodes():
    head = '{"message":{"content":[{"text":"caf\\u00e9 \\"q\\" \\\\ end'
    assert prompt_text(head, READ_MAX * 4) == 'café "q" \\ end'
    for cut in ("\\", "\\u", "\\u00", "\\u00e"):
        assert prompt_text(head + " " + cut, READ_MAX * 4) == 'café "q" \\ end '
    assert prompt_text(head + "\\\\", READ_MAX * 4) == 'café "q" \\ end\\'
    assert prompt_text('{"message":{"content":[{"data":"', READ_MAX * 4) is None  # an image
    assert prompt_text('{"message":{"content":[],"role":"assistant"}}', 44) is None
    assert prompt_text("not json", 8) is None


async def test_a_value_only_the_agents_redactor_hides_is_hidden_in_the_prompt(stores):
    """The approval row shows ``to`` masked by the app's redactor: the list learns that
    mask from the row, as sessions show does, without knowing the redactor."""
    store = stores()

    @tool
    def transfer(to: str, amount: int, api_token: str) -> str:
        """Send money."""
        return "sent"

    def script(messages: list[Any], tools: list[dict[str, Any]]) -> dict[str, Any]:
        args = {"to": "bobby-tables", "amount": 5, "api_token": "t"}
        return {"tool_calls": [{"name": "transfer", "args": args}]}

    def hide_to(tool_name: str | None, args: dict[str, Any]) -> dict[str, Any]:
        return {**redact_secrets(tool_name, args), "to": "<hidden>"}

    agent = Agent(
        model=ScriptedModel(script),
        tools=[transfer],
        interventions=[AskFirst()],
        approvals=ApprovalPolicy(redactor=hide_to),
        store=store,
        session_id="bt",
    )
    await agent.invoke_async("pay bobby-tables five")
    [row] = (await stores().session_page()).sessions
    assert row.first_prompt == "pay *** five"
    record = await store.load("bt")
    assert record is not None
    shown = show_session(record, fold(record), await store.approvals.find(session_id="bt"))
    assert shown.view.messages[0].text == row.first_prompt
