"""Gemini generateContent, as the fault server plays it, and llm-katan's Gemini routes shimmed.

The fault server answers ``/v1beta/models/{plan}:generateContent`` and
``:streamGenerateContent`` (SSE, one GenerateContentResponse per event) with the
documented shapes llm-katan cannot produce: thought parts and signatures, parallel
function calls, cached-token usage, safety blocks of the response and of the prompt,
and google.rpc error bodies (status names, ErrorInfo reasons, RetryInfo delays).
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from servers.plan import Recorder

_STATUS = {
    400: "INVALID_ARGUMENT",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


def _error(code: int, message: str, details: list[dict[str, Any]] | None = None) -> Response:
    error: dict[str, Any] = {"code": code, "message": message, "status": _STATUS[code]}
    if details:
        error["details"] = details
    return JSONResponse({"error": error}, status_code=code)


def _retry(delay: str) -> list[dict[str, Any]]:
    return [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}]


ERRORS = {
    "e429": lambda: _error(429, "Resource has been exhausted (e.g. check quota).", _retry("0.01s")),
    "e429slow": lambda: _error(
        429, "You exceeded your current quota, please check your plan.", _retry("3600s")
    ),
    "ectx": lambda: _error(
        400,
        "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
    ),
    "ekey": lambda: _error(
        400,
        "API key not valid. Please pass a valid API key.",
        [
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "API_KEY_INVALID",
                "domain": "googleapis.com",
            }
        ],
    ),
    "efmt": lambda: _error(400, "* GenerateContentRequest.contents: contents is not specified"),
    "e403": lambda: _error(403, "Method doesn't allow unregistered callers."),
    "e404": lambda: _error(
        404,
        "models/gemini-nope is not found for API version v1beta, or is not supported for "
        "generateContent.",
    ),
    "e500": lambda: _error(500, "An internal error has occurred."),
    "e503": lambda: _error(503, "The model is overloaded. Please try again later."),
    "e504": lambda: _error(504, "Deadline expired before operation could complete."),
}

SIGNATURE = b"\x01sig-of-the-call"
TEXT_SIGNATURE = b"\x02sig-of-the-text"


def _candidate(parts: list[dict[str, Any]], finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return candidate


def _usage(prompt: int = 12, output: int = 5, **extra: int) -> dict[str, int]:
    return {"promptTokenCount": prompt, "candidatesTokenCount": output, **extra}


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def _chunks(step: str, body: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The GenerateContentResponse chunks of one step (a whole response joins them)."""
    if step == "text":
        return [
            {"candidates": [_candidate([{"text": "Hel"}])]},
            {"candidates": [_candidate([{"text": "lo"}], "STOP")], "usageMetadata": _usage()},
        ]
    if step == "think":
        thought = {"text": "let me see", "thought": True}
        answer = {"text": "Done", "thoughtSignature": _b64(TEXT_SIGNATURE)}
        usage = _usage(10, 2, thoughtsTokenCount=30)
        return [
            {"candidates": [_candidate([thought])]},
            {"candidates": [_candidate([answer], "STOP")], "usageMetadata": usage},
        ]
    if step == "calls":  # parallel calls without ids; the first carries the signature
        first = {
            "functionCall": {"name": "add", "args": {"a": 1, "b": 2}},
            "thoughtSignature": _b64(SIGNATURE),
        }
        second = {"functionCall": {"name": "add", "args": {"a": 3, "b": 4}}}
        return [
            {"candidates": [_candidate([{"text": "Calling."}])]},
            {"candidates": [_candidate([first, second], "STOP")], "usageMetadata": _usage()},
        ]
    if step == "cached":
        usage = _usage(320, 4, cachedContentTokenCount=300)
        return [{"candidates": [_candidate([{"text": "Hi"}], "STOP")], "usageMetadata": usage}]
    if step == "safety":
        rating = {
            "category": "HARM_CATEGORY_DANGEROUS_CONTENT",
            "probability": "HIGH",
            "blocked": True,
        }
        candidate = {"finishReason": "SAFETY", "index": 0, "safetyRatings": [rating]}
        return [{"candidates": [candidate], "usageMetadata": _usage(12, 0)}]
    if step == "blocked":
        rating = {"category": "HARM_CATEGORY_HARASSMENT", "probability": "HIGH"}
        feedback = {"blockReason": "SAFETY", "safetyRatings": [rating]}
        return [{"promptFeedback": feedback, "usageMetadata": _usage(12, 0)}]
    if step == "length":
        return [{"candidates": [_candidate([{"text": "cut"}], "MAX_TOKENS")]}]
    if step == "broken":  # the stream ends without a finishReason
        return [{"candidates": [_candidate([{"text": "partial"}])]}]
    if step in ("mid_error", "early_error"):  # an error object inside a 200 stream
        error = {
            "error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}
        }
        text = [{"candidates": [_candidate([{"text": "partial"}])]}]
        return [*(text if step == "mid_error" else []), error]
    if step == "malformed":
        return [{"candidates": [{"finishReason": "MALFORMED_FUNCTION_CALL", "index": 0}]}]
    if step == "json":
        return [{"candidates": [_candidate([{"text": '{"label": "spam", "score": 9}'}], "STOP")]}]
    if step == "final_ok":  # a call of the forced final-answer tool tether offered
        names = [
            d["name"] for t in body.get("tools", []) for d in t.get("functionDeclarations", [])
        ]
        name = ([n for n in names if n.startswith("final_answer")] or ["final_answer"])[-1]
        call = {"functionCall": {"name": name, "args": {"label": "ham", "score": 2}}}
        return [{"candidates": [_candidate([call], "STOP")], "usageMetadata": _usage()}]
    return None


def _whole(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    whole: dict[str, Any] = {}
    parts: list[dict[str, Any]] = []
    for chunk in chunks:
        for candidate in chunk.get("candidates", []):
            parts += candidate.get("content", {}).get("parts", [])
            last = {k: v for k, v in candidate.items() if k != "content"}
            whole["candidates"] = [{**last, "content": {"role": "model", "parts": parts}}]
        for key in ("usageMetadata", "promptFeedback"):
            if key in chunk:
                whole[key] = chunk[key]
    return whole


async def _play(chunks: list[dict[str, Any]]) -> AsyncIterator[str]:
    for chunk in chunks:
        yield f"data: {json.dumps(chunk)}\r\n\r\n"


async def generate(request: Request) -> Response:
    """``POST /v1beta/models/{plan}:generateContent`` or ``:streamGenerateContent`` (also
    under ``/v1``, the version google-genai uses with a custom ``base_url``)."""
    recorder: Recorder = request.app.state.recorder
    model, _, method = request.path_params["target"].rpartition(":")
    body = await request.json()
    step = recorder.next_step(model, request.url.path, dict(request.headers), body)
    if step in ERRORS:
        return ERRORS[step]()
    chunks = _chunks(step, body)
    if chunks is None:
        return _error(400, f"fault server: unknown step {step!r}")
    if method == "streamGenerateContent":
        return StreamingResponse(_play(chunks), media_type="text/event-stream")
    return JSONResponse(_whole(chunks))


VERTEX_KEY = "llm-katan-vertexai-key"


def katan_gemini_app() -> Any:
    """llm-katan's Gemini routes (``--providers vertexai``, keys validated) behind a shim:
    llm-katan 0.22 reads the key from ``Authorization`` or ``?key=``, google-genai sends
    ``x-goog-api-key``, so the shim copies it into ``Authorization: Bearer``."""
    from llm_katan.config import ServerConfig
    from llm_katan.server import create_app

    config = ServerConfig(
        model_name="echo-model",
        backend="echo",
        host="127.0.0.1",
        providers=["vertexai"],
        validate_keys=True,
        stats_file="",
        dashboard_enabled=False,
    )
    return _KeyShim(create_app(config))


class _KeyShim:
    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = list(scope["headers"])
            names = {name for name, _ in headers}
            key = next((v for n, v in headers if n == b"x-goog-api-key"), None)
            if key is not None and b"authorization" not in names:
                headers.append((b"authorization", b"Bearer " + key))
                scope = {**scope, "headers": headers}
        await self.app(scope, receive, send)
