"""Anthropic Messages, as the fault server plays it (documented SSE events and error bodies)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from servers.plan import Recorder


def _error(status: int, type_: str, message: str) -> Response:
    body = {"type": "error", "error": {"type": type_, "message": message}}
    return JSONResponse(body, status_code=status, headers={"request-id": "req_fault"})


ERRORS = {
    "e401": lambda: _error(401, "authentication_error", "invalid x-api-key"),
    "e413": lambda: _error(
        413, "request_too_large", "Request exceeds the maximum allowed number of bytes."
    ),
    "efmt": lambda: _error(
        400, "invalid_request_error", "messages: text content blocks must be non-empty"
    ),
    "e529": lambda: _error(529, "overloaded_error", "Overloaded"),
    "ectx": lambda: _error(
        400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"
    ),
    "esig": lambda: _error(
        400,
        "invalid_request_error",
        "messages.1.content.0: Invalid `signature` in `thinking` block",
    ),
    "elong": lambda: _error(
        429, "rate_limit_error", "Extra usage is required for long context requests."
    ),
    "e404": lambda: _error(404, "not_found_error", "model: claude-nope"),
}


def _sse(event: str, data: dict[str, Any]) -> str:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n"


def _start(usage: dict[str, int] | None = None) -> str:
    message = {
        "id": "msg_f",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": "m",
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage or {"input_tokens": 21, "output_tokens": 1},
    }
    return _sse("message_start", {"type": "message_start", "message": message})


def _block(index: int, block: dict[str, Any], deltas: list[dict[str, Any]]) -> list[str]:
    out = [
        _sse(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": block},
        )
    ]
    out += [
        _sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
        for d in deltas
    ]
    return [*out, _sse("content_block_stop", {"type": "content_block_stop", "index": index})]


def _end(stop: str) -> list[str]:
    delta = {
        "type": "message_delta",
        "delta": {"stop_reason": stop, "stop_sequence": None},
        "usage": {"output_tokens": 9},
    }
    return [_sse("message_delta", delta), _sse("message_stop", {"type": "message_stop"})]


def _text(parts: list[str]) -> list[dict[str, Any]]:
    return [{"type": "text_delta", "text": p} for p in parts]


FINAL_INPUTS: dict[str, dict[str, Any]] = {
    "final_bad": {"label": "spam", "score": "very"},  # score is not an int
    "final_ok": {"label": "spam", "score": 9},
    "final_text": {"label": "ham", "score": 2},  # after some prose
}
"""Steps answering with a call of the forced final-answer tool (structured output)."""


def final_name(names: list[str]) -> str:
    """The final-answer tool the request offered: tether names it final_answer[_...] and
    offers it after the agent's own tools (one of which may be called final_answer)."""
    return ([n for n in names if n.startswith("final_answer")] or ["final_answer"])[-1]


def _final(step: str, name: str) -> list[str]:
    text = json.dumps(FINAL_INPUTS[step])
    args = [{"type": "input_json_delta", "partial_json": p} for p in (text[:7], text[7:])]
    prose = _block(0, {"type": "text", "text": ""}, _text(["Here ", "it is."]))
    call = _block(1, {"type": "tool_use", "id": "toolu_f", "name": name, "input": {}}, args)
    return [_start(), *(prose if step == "final_text" else []), *call, *_end("tool_use")]


def _lines(step: str, body: dict[str, Any] | None = None) -> list[str] | None:
    ping = _sse("ping", {"type": "ping"})
    if step in FINAL_INPUTS:
        return _final(step, final_name([t["name"] for t in (body or {}).get("tools", [])]))
    if step == "text":
        return [
            _start(),
            ping,
            *_block(0, {"type": "text", "text": ""}, _text(["Hel", "lo"])),
            *_end("end_turn"),
        ]
    if step == "thinking":
        thinking = [
            {"type": "thinking_delta", "thinking": "let me see"},
            {"type": "signature_delta", "signature": "sig123"},
        ]
        return [
            _start(),
            *_block(0, {"type": "thinking", "thinking": ""}, thinking),
            *_block(1, {"type": "text", "text": ""}, _text(["Done"])),
            *_end("end_turn"),
        ]
    if step == "tools":
        args = [{"type": "input_json_delta", "partial_json": p} for p in ['{"a": 4', ', "b": 5}']]
        return [
            _start(),
            *_block(0, {"type": "text", "text": ""}, _text(["Calling."])),
            *_block(1, {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {}}, args),
            *_end("tool_use"),
        ]
    if step == "cached":
        usage = {
            "input_tokens": 5,
            "output_tokens": 1,
            "cache_read_input_tokens": 300,
            "cache_creation_input_tokens": 40,
        }
        text = _block(0, {"type": "text", "text": ""}, _text(["Hi"]))
        return [_start(usage), *text, *_end("end_turn")]
    if step == "length":
        return [
            _start(),
            *_block(0, {"type": "text", "text": ""}, _text(["cut"])),
            *_end("max_tokens"),
        ]
    if step == "cut_call":  # the output limit cut the tool call's arguments
        args = [{"type": "input_json_delta", "partial_json": '{"a": 4, "b"'}]
        return [
            _start(),
            *_block(0, {"type": "tool_use", "id": "toolu_cut", "name": "add", "input": {}}, args),
            *_end("max_tokens"),
        ]
    if step == "garbage":  # valid JSON in the wrong shape: the delta is not an object
        bad = {"type": "content_block_delta", "index": 0, "delta": 7}
        return [_start(), _sse("content_block_delta", bad), *_end("end_turn")]
    if step == "refusal":
        return [_start(), *_end("refusal")]
    if step == "mid_error":
        error = _sse(
            "error",
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        )
        return [_start(), *_block(0, {"type": "text", "text": ""}, _text(["partial"]))[:2], error]
    if step == "early_error":
        error = _sse(
            "error",
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        )
        return [_start(), error]
    return None


async def _play(lines: list[str]) -> AsyncIterator[str]:
    for line in lines:
        yield line


async def messages(request: Request) -> Response:
    recorder: Recorder = request.app.state.recorder
    body = await request.json()
    model = str(body.get("model", ""))
    step = recorder.next_step(model, request.url.path, dict(request.headers), body)
    if step in ERRORS:
        return ERRORS[step]()
    if step in FINAL_INPUTS and not body.get("stream"):
        name = final_name([t["name"] for t in body.get("tools", [])])
        content = [{"type": "tool_use", "id": "toolu_f", "name": name, "input": FINAL_INPUTS[step]}]
        if step == "final_text":
            content.insert(0, {"type": "text", "text": "Here it is."})
        usage = {"input_tokens": 21, "output_tokens": 9}
        message = {"id": "msg_f", "type": "message", "role": "assistant", "content": content}
        return JSONResponse(
            {
                **message,
                "model": "m",
                "stop_reason": "tool_use",
                "stop_sequence": None,
                "usage": usage,
            }
        )
    lines = _lines(step, body)
    if lines is None or not body.get("stream"):
        return _error(400, "invalid_request_error", f"fault server: unknown step {step!r}")
    return StreamingResponse(_play(lines), media_type="text/event-stream")
