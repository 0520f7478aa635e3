"""A ``RunAgentInput`` read and checked, and what of it a tether run takes.

tether's session journal is the conversation of record: the input's ``messages`` bring
only what is new to it: the user message at their end (a run) or the tool messages
answering pending front-end calls (a continued run). The input's ``state`` is not applied
(the snapshot a client echoes back holds masked values); the session's own state is sent
as STATE_SNAPSHOT.
"""

from __future__ import annotations

from typing import Any, Final

from ag_ui.core import AssistantMessage, RunAgentInput, TextPart, ToolMessage, UserMessage
from pydantic import ValidationError
from starlette.exceptions import HTTPException

from tether.errors import ConfigurationError
from tether.messages import Message
from tether.session_ids import validate_session_id

MAX_ERROR: Final = 2000
"""Characters of a validation message given back (pydantic names every field at fault)."""


def read_input(body: Any) -> RunAgentInput:
    """``body`` (parsed JSON) as a RunAgentInput whose thread id is a valid session id;
    HTTPException 400 with pydantic's message (bounded) or the id's problem otherwise."""
    if not isinstance(body, dict):
        raise HTTPException(400, "the body must be a JSON object: a RunAgentInput")
    try:
        run = RunAgentInput.model_validate(body)
    except ValidationError as exc:
        text = str(exc)
        if len(text) > MAX_ERROR:
            text = text[:MAX_ERROR] + f"... ({exc.error_count()} errors)"
        raise HTTPException(400, f"the body is not a valid RunAgentInput: {text}") from None
    try:
        validate_session_id(run.thread_id)
    except ConfigurationError as exc:
        raise HTTPException(400, f"threadId is not a valid tether session id: {exc}") from None
    return run


def new_user_messages(run: RunAgentInput) -> list[Message]:
    """The input's last message, a user message, as the tether prompt (a client sends the
    whole conversation each run; the earlier messages are already in the journal);
    HTTPException 400 when the last message is not a user message or holds no text."""
    last = run.messages[-1] if run.messages else None
    if not isinstance(last, UserMessage):
        raise HTTPException(
            400,
            "nothing to run: the input's messages do not end with a user message (and the "
            "thread waits on no interrupt a resume entry or a tool message could answer)",
        )
    return [Message.user(_text(last))]


def _text(message: UserMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    texts = [part.text for part in content if isinstance(part, TextPart)]
    if len(texts) != len(content):
        raise HTTPException(
            400, f"user message {message.id[:80]!r}: only text parts are taken over AG-UI"
        )
    return "\n".join(texts)


def tool_results(run: RunAgentInput) -> dict[str, str]:
    """The tool messages after the input's last assistant message (the answers to the
    calls it made): tool call id -> the result's text (its ``error`` when it has one)."""
    last = max(
        (i for i, m in enumerate(run.messages) if isinstance(m, AssistantMessage)), default=-1
    )
    out: dict[str, str] = {}
    for message in run.messages[last + 1 :]:
        if isinstance(message, ToolMessage):
            content = message.content
            if isinstance(content, str):
                text = content
            else:
                text = "\n".join(p.text for p in content if isinstance(p, TextPart))
            out[message.tool_call_id] = text if message.error is None else message.error
    return out
