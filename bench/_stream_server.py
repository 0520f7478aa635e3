"""A server that streams N text chunks, for bench/streaming.py.

Run: ``python bench/_stream_server.py PORT``; the model name is the chunk count.
Three wire formats: Chat Completions (``/v1/chat/completions``), Gemini
``streamGenerateContent?alt=sse`` (``/v1beta/models/N:...``, also under ``/v1``,
the version google-genai uses with a custom ``base_url``) and the Responses API
(``/v1/responses``). Every payload is built before the first byte is sent.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route


def _sse(data: object) -> bytes:
    return f"data: {json.dumps(data)}\n\n".encode()


def _stream(payload: list[bytes]) -> StreamingResponse:
    async def play() -> AsyncIterator[bytes]:
        for line in payload:
            yield line

    return StreamingResponse(play(), media_type="text/event-stream")


def _chat_line(
    delta: dict[str, object] | None, finish: str | None = None, usage: object = None
) -> bytes:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    data: dict[str, object] = {
        "id": "b",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": choices,
    }
    if usage is not None:
        data["usage"] = usage
    return _sse(data)


async def chat(request: Request) -> StreamingResponse:
    body = await request.json()
    count = int(body["model"])
    payload = [_chat_line({"role": "assistant", "content": ""})]
    payload += [_chat_line({"content": f"tok{i} "}) for i in range(count)]
    usage = {"prompt_tokens": 1, "completion_tokens": count, "total_tokens": count + 1}
    payload += [_chat_line({}, "stop"), _chat_line(None, usage=usage), b"data: [DONE]\n\n"]
    return _stream(payload)


async def gemini(request: Request) -> StreamingResponse:
    """``streamGenerateContent``: one GenerateContentResponse per event, N text chunks,
    then one with ``finishReason`` and ``usageMetadata``."""
    count = int(request.path_params["target"].partition(":")[0])
    payload = [
        _sse({"candidates": [{"content": {"parts": [{"text": f"tok{i} "}], "role": "model"}}]})
        for i in range(count)
    ]
    usage = {"promptTokenCount": 1, "candidatesTokenCount": count, "totalTokenCount": count + 1}
    last = {"candidates": [{"finishReason": "STOP", "index": 0}], "usageMetadata": usage}
    payload.append(_sse(last))
    return _stream(payload)


def _response(status: str, output: list[object], usage: object) -> dict[str, object]:
    return {
        "id": "resp_b",
        "object": "response",
        "created_at": 0,
        "model": "m",
        "status": status,
        "output": output,
        "usage": usage,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }


async def responses(request: Request) -> StreamingResponse:
    """Responses events: created, output_item.added, N output_text.delta,
    output_item.done, completed with usage."""
    body = await request.json()
    count = int(body["model"])
    text = "".join(f"tok{i} " for i in range(count))
    message = {"type": "message", "id": "msg_b", "role": "assistant", "status": "completed"}
    done = {**message, "content": [{"type": "output_text", "text": text, "annotations": []}]}
    usage = {
        "input_tokens": 1,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": count,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": count + 1,
    }
    events: list[dict[str, object]] = [
        {"type": "response.created", "response": _response("in_progress", [], None)},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**message, "status": "in_progress", "content": []},
        },
    ]
    events += [
        {
            "type": "response.output_text.delta",
            "item_id": "msg_b",
            "output_index": 0,
            "content_index": 0,
            "delta": f"tok{i} ",
            "logprobs": [],
        }
        for i in range(count)
    ]
    events += [
        {"type": "response.output_item.done", "output_index": 0, "item": done},
        {"type": "response.completed", "response": _response("completed", [done], usage)},
    ]
    payload = [
        f"event: {e['type']}\ndata: {json.dumps({**e, 'sequence_number': n})}\n\n".encode()
        for n, e in enumerate(events)
    ]
    return _stream(payload)


app = Starlette(
    routes=[
        Route("/v1/chat/completions", chat, methods=["POST"]),
        Route("/v1/responses", responses, methods=["POST"]),
        Route("/v1beta/models/{target}", gemini, methods=["POST"]),
        Route("/v1/models/{target}", gemini, methods=["POST"]),
    ]
)

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
