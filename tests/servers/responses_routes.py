"""The OpenAI Responses API (``/v1/responses``), as the fault server plays it.

Steps (see servers/plan.py): ``text``, ``tools`` (two parallel calls with
interleaved argument deltas), ``reason_tools`` (a reasoning item with two summary
parts and encrypted content, then a call), ``reason_hidden`` (encrypted reasoning
only), ``reason_clean`` (reasoning, then a ``clean`` call), ``incomplete``,
``filtered``, ``failed`` (response.failed, server_error), ``error_event`` (an SSE
error event, rate limit), ``cut`` (no response.completed), ``json_STEP`` (a whole
JSON response even to a stream request), ``json_garbage``, and the HTTP errors of
servers/openai_routes.py (same documented bodies).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from servers.openai_routes import ERRORS, _error
from servers.plan import Recorder

USAGE = {
    "input_tokens": 11,
    "input_tokens_details": {"cached_tokens": 4},
    "output_tokens": 7,
    "output_tokens_details": {"reasoning_tokens": 3},
    "total_tokens": 18,
}
ENCRYPTED = "gAAAA-encrypted-reasoning-1"


def _response(output: list[dict[str, Any]], status: str = "completed", **extra: Any) -> dict:
    return {
        "id": "resp_f",
        "object": "response",
        "created_at": 0,
        "model": "m",
        "status": status,
        "output": output,
        "usage": USAGE if status != "in_progress" else None,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        **extra,
    }


def _message(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def _call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": f"fc_{call_id}",
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
        "status": "completed",
    }


def _reasoning(summary: list[str], item_id: str = "rs_1") -> dict[str, Any]:
    return {
        "type": "reasoning",
        "id": item_id,
        "summary": [{"type": "summary_text", "text": s} for s in summary],
        "encrypted_content": ENCRYPTED,
    }


def _sse(event: dict[str, Any]) -> str:
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"


def _items(step: str) -> list[dict[str, Any]]:
    if step in ("tools", "done_only"):
        return [
            _call("call_a", "add", '{"a": 1, "b": 2}'),
            _call("call_b", "add", '{"a": 10, "b": 2}'),
        ]
    if step == "reason_tools":
        return [
            _reasoning(["First I add.", "Then I answer."]),
            _call("call_r", "add", '{"a": 2, "b": 3}'),
        ]
    if step == "reason_hidden":
        return [_reasoning([]), _message("Done")]
    if step == "reason_clean":
        return [
            _reasoning(["The temp files must go."]),
            _call("call_c", "clean", '{"pattern": "*.tmp"}'),
        ]
    if step in ("filtered", "failed", "error_event", "cut"):  # fail before any output
        return []
    return [_message("Hello world")]


def _item_events(index: int, item: dict[str, Any], split_args: bool) -> list[dict[str, Any]]:
    kind = item["type"]
    if kind == "message":
        text = item["content"][0]["text"]
        added = {**item, "content": [], "status": "in_progress"}
        parts = [text[i : i + 4] for i in range(0, len(text), 4)]
        return [
            {"type": "response.output_item.added", "output_index": index, "item": added},
            *(
                {
                    "type": "response.output_text.delta",
                    "item_id": item["id"],
                    "output_index": index,
                    "content_index": 0,
                    "delta": p,
                }
                for p in parts
            ),
            {"type": "response.output_item.done", "output_index": index, "item": item},
        ]
    if kind == "reasoning":
        added = {**item, "summary": [], "encrypted_content": None}
        events = [{"type": "response.output_item.added", "output_index": index, "item": added}]
        for number, part in enumerate(item["summary"]):
            for piece in (part["text"][:5], part["text"][5:]):
                events.append(
                    {
                        "type": "response.reasoning_summary_text.delta",
                        "item_id": item["id"],
                        "output_index": index,
                        "summary_index": number,
                        "delta": piece,
                    }
                )
        return [*events, {"type": "response.output_item.done", "output_index": index, "item": item}]
    added = {**item, "arguments": "", "status": "in_progress"}
    args = item["arguments"]
    return [
        {"type": "response.output_item.added", "output_index": index, "item": added},
        *(
            [
                {
                    "type": "response.function_call_arguments.delta",
                    "item_id": item["id"],
                    "output_index": index,
                    "delta": args[:6],
                },
                {
                    "type": "response.function_call_arguments.delta",
                    "item_id": item["id"],
                    "output_index": index,
                    "delta": args[6:],
                },
            ]
            if split_args
            else []
        ),
        {"type": "response.output_item.done", "output_index": index, "item": item},
    ]


def _events(step: str) -> list[dict[str, Any]]:
    items = _items(step)
    start = {"type": "response.created", "response": _response([], "in_progress")}
    events: list[dict[str, Any]] = [start]
    per_item = [_item_events(i, item, step != "done_only") for i, item in enumerate(items)]
    if step == "tools":  # interleave the two calls' argument deltas
        first, second = per_item
        events += [
            first[0],
            second[0],
            first[1],
            second[1],
            first[2],
            second[2],
            first[3],
            second[3],
        ]
    else:
        events += [e for group in per_item for e in group]
    if step == "failed":
        error = {"code": "server_error", "message": "The server had an error processing it."}
        return [
            *events,
            {"type": "response.failed", "response": _response([], "failed", error=error)},
        ]
    if step == "error_event":
        return [*events, {"type": "error", "code": "rate_limit_exceeded",
                          "message": "Rate limit reached for requests per min.", "param": None}]  # fmt: skip
    if step == "cut":
        return events
    if step in ("incomplete", "filtered"):
        reason = "max_output_tokens" if step == "incomplete" else "content_filter"
        final = _response(items, "incomplete", incomplete_details={"reason": reason})
        return [*events, {"type": "response.incomplete", "response": final}]
    return [*events, {"type": "response.completed", "response": _response(items)}]


async def _play(events: list[dict[str, Any]]) -> AsyncIterator[str]:
    for number, event in enumerate(events):
        yield _sse({**event, "sequence_number": number})


async def responses(request: Request) -> Response:
    recorder: Recorder = request.app.state.recorder
    body = await request.json()
    model = str(body.get("model", ""))
    step = recorder.next_step(model, request.url.path, dict(request.headers), body)
    if step in ERRORS:
        return ERRORS[step]()
    if step == "empty":
        return StreamingResponse(iter(()), media_type="text/event-stream")
    if step == "json_garbage":
        return JSONResponse({"object": "response", "output": 5})
    if not body.get("stream") or step.startswith("json_"):  # json_*: whole JSON even if streamed
        step = step.removeprefix("json_")
        if step == "failed":
            error = {"code": "server_error", "message": "The server had an error processing it."}
            return JSONResponse(_response([], "failed", error=error))
        return JSONResponse(_response(_items(step)))
    known = ("text", "tools", "reason_tools", "reason_hidden", "reason_clean", "done_only")
    if step not in (*known, "incomplete", "filtered", "failed", "error_event", "cut"):
        return _error(400, f"fault server: unknown step {step!r}", "invalid_request_error", None)
    return StreamingResponse(_play(_events(step)), media_type="text/event-stream")
