"""Bedrock Converse / ConverseStream, as the fault server plays it.

ConverseStream answers in AWS's binary event-stream framing (prelude, headers,
JSON payload, CRC32s), the format botocore decodes.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from servers.anthropic_routes import FINAL_INPUTS, final_name
from servers.plan import Recorder


def encode_event(headers: dict[str, str], payload: dict[str, Any]) -> bytes:
    """One event-stream message with string headers and a JSON payload."""
    head = b""
    for name, value in headers.items():
        raw_name, raw_value = name.encode(), value.encode()
        head += struct.pack("!B", len(raw_name)) + raw_name + b"\x07"
        head += struct.pack("!H", len(raw_value)) + raw_value
    body = json.dumps(payload).encode()
    total = 12 + len(head) + len(body) + 4
    prelude = struct.pack("!II", total, len(head))
    prelude += struct.pack("!I", zlib.crc32(prelude) & 0xFFFFFFFF)
    message = prelude + head + body
    return message + struct.pack("!I", zlib.crc32(message) & 0xFFFFFFFF)


def event(kind: str, payload: dict[str, Any]) -> bytes:
    headers = {":event-type": kind, ":content-type": "application/json", ":message-type": "event"}
    return encode_event(headers, payload)


def exception(kind: str, message: str) -> bytes:
    headers = {
        ":exception-type": kind,
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    return encode_event(headers, {"message": message})


def _error(status: int, kind: str, message: str) -> Response:
    return JSONResponse(
        {"message": message},
        status_code=status,
        headers={
            "x-amzn-ErrorType": f"{kind}:http://internal.amazon.com/coral/com.amazon.bedrock/"
        },
    )


ERRORS = {
    "ethrottle": lambda: _error(
        429, "ThrottlingException", "Too many requests, please wait before trying again."
    ),
    "ectx": lambda: _error(400, "ValidationException", "Input is too long for requested model."),
    "e404": lambda: _error(
        404,
        "ResourceNotFoundException",
        "Could not resolve the foundation model from the provided model identifier.",
    ),
    "e403": lambda: _error(
        403,
        "AccessDeniedException",
        "You don't have access to the model with the specified model ID.",
    ),
    "efmt": lambda: _error(
        400,
        "ValidationException",
        "A conversation must alternate between user and assistant roles.",
    ),
    "e500": lambda: _error(500, "InternalServerException", "Internal server error"),
}

_META = {
    "usage": {"inputTokens": 13, "outputTokens": 5, "totalTokens": 18},
    "metrics": {"latencyMs": 1},
}


def _final(step: str, name: str) -> list[bytes]:
    text = json.dumps(FINAL_INPUTS[step])
    begin = event(
        "contentBlockStart",
        {"contentBlockIndex": 1, "start": {"toolUse": {"toolUseId": "tu_f", "name": name}}},
    )
    parts = [
        event("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolUse": {"input": p}}})
        for p in (text[:7], text[7:])
    ]
    prose = event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Here it is."}})
    return [
        event("messageStart", {"role": "assistant"}),
        *([prose] if step == "final_text" else []),
        begin,
        *parts,
        event("contentBlockStop", {"contentBlockIndex": 1}),
        event("messageStop", {"stopReason": "tool_use"}),
        event("metadata", _META),
    ]


def _names(body: dict[str, Any]) -> list[str]:
    return [t["toolSpec"]["name"] for t in body.get("toolConfig", {}).get("tools", [])]


def _events(step: str) -> list[bytes] | None:
    start = event("messageStart", {"role": "assistant"})
    if step == "text":
        deltas = [
            event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": t}})
            for t in ("Hel", "lo")
        ]
        return [
            start,
            *deltas,
            event("contentBlockStop", {"contentBlockIndex": 0}),
            event("messageStop", {"stopReason": "end_turn"}),
            event("metadata", _META),
        ]
    if step == "tools":
        begin = event(
            "contentBlockStart",
            {"contentBlockIndex": 1, "start": {"toolUse": {"toolUseId": "tu_1", "name": "add"}}},
        )
        parts = [
            event("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolUse": {"input": p}}})
            for p in ('{"a": 6', ', "b": 7}')
        ]
        reasoning = event(
            "contentBlockDelta",
            {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "thinking hard"}}},
        )
        signature = event(
            "contentBlockDelta",
            {"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "sigB"}}},
        )
        return [
            start,
            reasoning,
            signature,
            begin,
            *parts,
            event("contentBlockStop", {"contentBlockIndex": 1}),
            event("messageStop", {"stopReason": "tool_use"}),
            event("metadata", _META),
        ]
    if step == "cached":
        meta = {
            "usage": {
                "inputTokens": 5,
                "outputTokens": 2,
                "totalTokens": 7,
                "cacheReadInputTokens": 300,
                "cacheWriteInputTokens": 40,
            },
            "metrics": {"latencyMs": 1},
        }
        return [
            start,
            event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Hi"}}),
            event("contentBlockStop", {"contentBlockIndex": 0}),
            event("messageStop", {"stopReason": "end_turn"}),
            event("metadata", meta),
        ]
    if step == "length":
        return [
            start,
            event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "cut"}}),
            event("contentBlockStop", {"contentBlockIndex": 0}),
            event("messageStop", {"stopReason": "max_tokens"}),
            event("metadata", _META),
        ]
    if step == "cut_call":  # the output limit cut the tool call's arguments
        begin = event(
            "contentBlockStart",
            {"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "tu_cut", "name": "add"}}},
        )
        part = event(
            "contentBlockDelta",
            {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '{"a": 6, "b"'}}},
        )
        return [
            start,
            begin,
            part,
            event("contentBlockStop", {"contentBlockIndex": 0}),
            event("messageStop", {"stopReason": "max_tokens"}),
            event("metadata", _META),
        ]
    if step == "guardrail":
        return [
            start,
            event("messageStop", {"stopReason": "guardrail_intervened"}),
            event("metadata", _META),
        ]
    if step == "mid_exc":
        delta = event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "par"}})
        return [start, delta, exception("modelStreamErrorException", "The model stream failed.")]
    if step == "early_exc":
        return [start, exception("throttlingException", "Too many tokens, please wait.")]
    return None


async def _play(chunks: list[bytes]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk


async def converse(request: Request) -> Response:
    recorder: Recorder = request.app.state.recorder
    model = request.path_params["model_id"]
    body = await request.json()
    step = recorder.next_step(model, request.url.path, dict(request.headers), body)
    if step in ERRORS:
        return ERRORS[step]()
    if request.url.path.endswith("/converse"):
        content: list[dict[str, Any]] = [{"text": "Hello"}]
        stop = "end_turn"
        if step == "tools":
            content = [{"toolUse": {"toolUseId": "tu_w", "name": "add", "input": {"a": 1, "b": 1}}}]
            stop = "tool_use"
        if step in FINAL_INPUTS:
            use = {"toolUseId": "tu_f", "name": final_name(_names(body))}
            content = [{"toolUse": {**use, "input": FINAL_INPUTS[step]}}]
            if step == "final_text":
                content.insert(0, {"text": "Here it is."})
            stop = "tool_use"
        return JSONResponse(
            {
                "output": {"message": {"role": "assistant", "content": content}},
                "stopReason": stop,
                **_META,
            }
        )
    if step == "unframed":  # a whole JSON body, not AWS event-stream framing (as llm-katan)
        return JSONResponse({"output": {"message": {"role": "assistant", "content": []}}})
    chunks = _final(step, final_name(_names(body))) if step in FINAL_INPUTS else _events(step)
    if chunks is None:
        return _error(400, "ValidationException", f"fault server: unknown step {step!r}")
    return StreamingResponse(_play(chunks), media_type="application/vnd.amazon.eventstream")
