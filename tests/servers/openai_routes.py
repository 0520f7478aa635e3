"""OpenAI Chat Completions, as the fault server plays it (documented error bodies)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse

from servers.plan import Recorder


def _error(
    status: int, message: str, type_: str, code: str | None, headers: Any = None
) -> Response:
    body = {"error": {"message": message, "type": type_, "param": None, "code": code}}
    return JSONResponse(body, status_code=status, headers=headers)


ERRORS = {
    "e401": lambda: _error(
        401, "Incorrect API key provided: sk-bad.", "invalid_request_error", "invalid_api_key"
    ),
    "e402": lambda: _error(
        402, "You have insufficient credits. Add more at the billing page.", "billing_error", None
    ),
    "e402t": lambda: _error(
        402, "Spend limit reached; it resets at 00:00 UTC, try again later.", "billing_error", None
    ),
    "e404": lambda: _error(
        404,
        "The model `gpt-nope` does not exist or you do not have access to it.",
        "invalid_request_error",
        "model_not_found",
    ),
    "efmt": lambda: _error(
        400,
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
        "message with 'tool_calls'.",
        "invalid_request_error",
        None,
    ),
    "e413": lambda: _error(413, "Request entity too large.", "invalid_request_error", None),
    "ectx": lambda: _error(
        400,
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
        "invalid_request_error",
        "context_length_exceeded",
    ),
    "e429ra": lambda: _error(
        429,
        "Rate limit reached for requests per min.",
        "requests",
        "rate_limit_exceeded",
        {"retry-after": "0.01"},
    ),
    "e429quota": lambda: _error(
        429,
        "You exceeded your current quota, please check your plan and billing details.",
        "insufficient_quota",
        "insufficient_quota",
    ),
    "e500": lambda: _error(
        500, "The server had an error while processing your request.", "server_error", None
    ),
    "e529": lambda: _error(
        529,
        "The engine is currently overloaded, please try again later.",
        "server_error",
        "overloaded",
    ),
    "e502html": lambda: PlainTextResponse(
        "<html><body><h1>502 Bad Gateway</h1></body></html>", status_code=502
    ),
}


def _chunk(delta: dict[str, Any] | None, finish: str | None = None, usage: Any = None) -> str:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    data = {
        "id": "chatcmpl-f",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": choices,
    }
    if usage is not None:
        data["usage"] = usage
    return f"data: {json.dumps(data)}\n\n"


USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}


def _call(
    index: int, id_: str | None = None, name: str | None = None, args: str = ""
) -> dict[str, Any]:
    function: dict[str, Any] = {"arguments": args}
    if name:
        function["name"] = name
    call: dict[str, Any] = {"index": index, "function": function}
    if id_:
        call["id"] = id_
        call["type"] = "function"
    return call


def _text_lines(parts: list[str], finish: str = "stop") -> list[str]:
    lines = [_chunk({"role": "assistant", "content": ""})]
    lines += [_chunk({"content": p}) for p in parts]
    return [*lines, _chunk({}, finish), _chunk(None, usage=USAGE), "data: [DONE]\n\n"]


def _stream_lines(step: str) -> list[str] | None:
    if step == "text":
        return _text_lines(["Hel", "lo ", "world"])
    if step == "think":
        return _text_lines(["<thi", "nk>secret ", "plan</th", "ink>Answer", " a < b"])
    if step == "reasoning_field":
        lines = [_chunk({"role": "assistant", "reasoning_content": "hidden thought"})]
        return lines + _text_lines(["Visible"])
    if step == "weird_stop":
        return _text_lines(["odd"], finish="tool_calls_pending_xyz")
    if step == "length":
        return _text_lines(["cut"], finish="length")
    if step == "filtered":
        return _text_lines([], finish="content_filter")
    if step == "blank":
        return _text_lines([])
    if step == "nousage":  # a compatible server that never sends a usage chunk
        return [line for line in _text_lines(["Hello world"]) if '"usage"' not in line]
    if step == "empty":
        return ["data: [DONE]\n\n"]
    if step == "malformed":
        return [_chunk({"role": "assistant"}), "data: {not json\n\n", "data: [DONE]\n\n"]
    if step == "garbage":  # valid JSON in the wrong shape: choices is not a list
        return ['data: {"id": "x", "object": "chat.completion.chunk", "choices": 5}\n\n']
    if step == "lenient":
        body = 'Sure.<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>'
        return _text_lines([body[:9], body[9:30], body[30:]])
    if step in ("tools", "badargs"):
        second = '"b": 2}' if step == "tools" else '"b": 2'
        return [
            _chunk({"role": "assistant", "tool_calls": [_call(0, "call_a", "add")]}),
            _chunk({"tool_calls": [_call(1, "call_b", "add")]}),
            _chunk({"tool_calls": [_call(0, args='{"a": ')]}),
            _chunk({"tool_calls": [_call(1, args='{"a": 10, ')]}),
            _chunk({"tool_calls": [_call(0, args='1, "b": 2}')]}),
            _chunk({"tool_calls": [_call(1, args=second)]}),
            _chunk({}, "tool_calls"),
            _chunk(None, usage=USAGE),
            "data: [DONE]\n\n",
        ]
    if step == "cut_call":  # the output limit cut the tool call's arguments
        return [
            _chunk({"role": "assistant", "tool_calls": [_call(0, "call_cut", "add")]}),
            _chunk({"tool_calls": [_call(0, args='{"a": 1, "b"')]}),
            _chunk({}, "length"),
            _chunk(None, usage=USAGE),
            "data: [DONE]\n\n",
        ]
    if step == "cached":  # usage with cached prompt tokens (prompt_tokens includes them)
        usage = {**USAGE, "prompt_tokens_details": {"cached_tokens": 8}}
        lines = _text_lines(["Hello"])
        return [*lines[:-2], _chunk(None, usage=usage), lines[-1]]
    if step == "bench":
        return _text_lines(["tok "] * 1000)
    return None


async def _play(lines: list[str], step: str) -> AsyncIterator[str]:
    if step == "stall":
        await asyncio.sleep(30)
    if step == "break_early":
        yield _chunk({"role": "assistant"})
        raise RuntimeError("fault server: connection dropped on purpose")
    for number, line in enumerate(lines):
        yield line
        if step == "break_mid" and number == 2:
            await asyncio.sleep(0.3)  # let the client deliver the text before the drop
            raise RuntimeError("fault server: connection dropped on purpose")
        if number % 50 == 49:
            await asyncio.sleep(0)


async def chat_completions(request: Request) -> Response:
    recorder: Recorder = request.app.state.recorder
    body = await request.json()
    model = str(body.get("model", ""))
    step = recorder.next_step(model, request.url.path, dict(request.headers), body)
    if step in ERRORS:
        return ERRORS[step]()
    if step in _REFUSES:  # a compatible server without the field, then a text/tools answer
        field, answer, refusal = _REFUSES[step]
        if field in body:
            return refusal()
        step = answer
    if not body.get("stream") or step.startswith("json_"):  # json_*: whole JSON even if streamed
        return JSONResponse(_whole(step.removeprefix("json_")))
    lines = _stream_lines("text" if step in ("stall", "break_mid", "break_early") else step)
    if lines is None:
        return _error(400, f"fault server: unknown step {step!r}", "invalid_request_error", None)
    return StreamingResponse(_play(lines, step), media_type="text/event-stream")


_REFUSES = {  # what vLLM without --enable-auto-tool-choice and a strict pydantic server answer
    "no_tool_choice": (
        "tool_choice",
        "tools",
        lambda: _error(
            400,
            '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser '
            "to be set",
            "BadRequestError",
            None,
        ),
    ),
    "no_stream_options": (
        "stream_options",
        "nousage",
        lambda: JSONResponse(
            {
                "detail": [
                    {
                        "type": "extra_forbidden",
                        "loc": ["body", "stream_options"],
                        "msg": "Extra inputs are not permitted",
                    }
                ]
            },
            status_code=422,
        ),
    ),
}


def _whole(step: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": "Hello world"}
    finish = "stop"
    if step == "tools":
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_w",
                    "type": "function",
                    "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'},
                }
            ],
        }
        finish = "tool_calls"
    choices = [] if step == "empty" else [{"index": 0, "message": message, "finish_reason": finish}]
    return {
        "id": "chatcmpl-w",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": choices,
        "usage": USAGE,
    }
