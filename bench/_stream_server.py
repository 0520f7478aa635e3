"""A Chat Completions server that streams N text chunks, for bench/streaming.py.

Run: ``python bench/_stream_server.py PORT``; the model name is the chunk count.
"""

from __future__ import annotations

import json
import sys

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route


def _line(
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
    return f"data: {json.dumps(data)}\n\n".encode()


async def chat(request: Request) -> StreamingResponse:
    body = await request.json()
    count = int(body["model"])
    payload = [_line({"role": "assistant", "content": ""})]
    payload += [_line({"content": f"tok{i} "}) for i in range(count)]
    payload += [
        _line({}, "stop"),
        _line(
            None, usage={"prompt_tokens": 1, "completion_tokens": count, "total_tokens": count + 1}
        ),
        b"data: [DONE]\n\n",
    ]

    async def play():  # type: ignore[no-untyped-def]
        for line in payload:
            yield line

    return StreamingResponse(play(), media_type="text/event-stream")


app = Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
