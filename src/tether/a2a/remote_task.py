"""A remote A2A task read as the outcome of a call: its answer, its questions, its end.

Everything read here is untrusted: text is cleaned and cut, data parts are bounded JSON.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tether.a2a.remote_card import clean
from tether.messages import JSONValue

if TYPE_CHECKING:
    from a2a.types.a2a_pb2 import Message, Part, Task

MAX_REPLY = 64_000
"""Characters of a remote answer the model gets (the rest is cut)."""
MAX_QUESTIONS = 20
MAX_QUESTION_JSON = 8_000


def state_of(task: Task) -> str:
    """The task's state as A2A names it (``input-required``, ``completed``, ...)."""
    from a2a.types.a2a_pb2 import TaskState

    try:
        name = TaskState.Name(task.status.state)
    except ValueError:
        return "unspecified"
    return name.removeprefix("TASK_STATE_").lower().replace("_", "-")


@dataclass(frozen=True, slots=True)
class Question:
    """One thing the remote task asks (an input-required status)."""

    id: str
    name: str
    reason: JSONValue


def message_text(message: Message | None, limit: int = MAX_REPLY) -> str:
    if message is None:
        return ""
    return clean("\n".join(p.text for p in message.parts if p.text), limit)


def answer_of(task: Task) -> str:
    """A completed task's answer: its artifacts' text, else its status message's, else the
    last agent message of its history."""
    texts = [p.text for a in task.artifacts for p in a.parts if p.text]
    if texts:
        return clean("\n".join(texts), MAX_REPLY)
    if task.status.HasField("message"):
        text = message_text(task.status.message)
        if text:
            return text
    from a2a.types.a2a_pb2 import Role

    for message in reversed(task.history):
        if message.role == Role.ROLE_AGENT:
            return message_text(message)
    return ""


def questions_of(task: Task) -> list[Question]:
    """What an input-required task asks: a question per data part with an ``id`` (tether's
    and this shape's servers: ``{"id", "name", "reason", ...}``), else the status text as
    one question ``input``."""
    message = task.status.message if task.status.HasField("message") else None
    text = message_text(message, 4_000)
    found: list[Question] = []
    for part in list(message.parts if message is not None else [])[: MAX_QUESTIONS * 2]:
        data = _data(part)
        if not isinstance(data, dict) or not isinstance(data.get("id"), str):
            continue
        qid = clean(data["id"], 200)
        name = data.get("name")
        label = clean(name, 200) if isinstance(name, str) and name else qid
        found.append(Question(qid, label, _bounded({**data, "question": text} if text else data)))
        if len(found) == MAX_QUESTIONS:
            break
    if not found:
        found.append(Question("input", "input", {"question": text}))
    return found


def _data(part: Part) -> Any:
    if not part.HasField("data"):
        return None
    from google.protobuf.json_format import MessageToDict

    return MessageToDict(part.data)


def _bounded(value: Any) -> JSONValue:
    """``value`` as JSON of at most :data:`MAX_QUESTION_JSON` characters (else its text)."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    if len(text) <= MAX_QUESTION_JSON:
        cleaned: JSONValue = json.loads(text)
        return _clean_strings(cleaned)
    return {"question": clean(text, MAX_QUESTION_JSON)}


def _clean_strings(value: JSONValue) -> JSONValue:
    if isinstance(value, str):
        return clean(value, MAX_QUESTION_JSON)
    if isinstance(value, list):
        return [_clean_strings(v) for v in value]
    if isinstance(value, dict):
        return {clean(k, 200): _clean_strings(v) for k, v in value.items()}
    return value
