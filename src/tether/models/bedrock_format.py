"""tether messages and tool specs to the Bedrock Converse layout; Converse errors to ErrorInfo."""

from __future__ import annotations

import base64
from typing import Any

from tether.errors import ConfigurationError
from tether.events import ModelStopReason
from tether.messages import Image, ReasoningBlock, TextBlock, ToolCall, ToolResult, Usage
from tether.models.alternation import alternating
from tether.models.base import ModelRequest
from tether.models.failover import FORMAT_CODE, ErrorInfo, parse_retry_after
from tether.models.output_tool import OutputTool

_STOP: dict[str, ModelStopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "max_tokens",
    "stop_sequence": "stop_sequence",
    "guardrail_intervened": "content_filter",
    "content_filtered": "content_filter",
}


def stop_reason(value: str | None) -> ModelStopReason:
    """Converse's stopReason as a tether stop reason (unknown values count as end_turn)."""
    return _STOP.get(value or "end_turn", "end_turn")


def usage_from(raw: dict[str, Any] | None) -> Usage:
    raw = raw or {}
    return Usage(
        input_tokens=int(raw.get("inputTokens", 0)),
        output_tokens=int(raw.get("outputTokens", 0)),
        cache_read_tokens=int(raw.get("cacheReadInputTokens", 0)),
        cache_write_tokens=int(raw.get("cacheWriteInputTokens", 0)),
    )


def request_body(model: str, request: ModelRequest, max_tokens: int | None) -> dict[str, Any]:
    body: dict[str, Any] = {"modelId": model, "messages": alternating(request, _block)}
    system = [request.system_prompt] if request.system_prompt else []
    system += [m.text for m in request.messages if m.role == "system" and m.text]
    if system:
        body["system"] = [{"text": text} for text in system]
    if request.tool_specs:
        body["toolConfig"] = {"tools": [_tool(spec) for spec in request.tool_specs]}
    if max_tokens is not None:
        body["inferenceConfig"] = {"maxTokens": max_tokens}
    return body


def _block(block: Any) -> dict[str, Any] | None:
    kind = type(block)
    if kind is TextBlock:
        return {"text": block.text} if block.text else None
    if kind is ToolCall:
        return {"toolUse": {"toolUseId": block.id, "name": block.name, "input": block.arguments}}
    if kind is ToolResult:
        return {
            "toolResult": {
                "toolUseId": block.tool_call_id,
                "content": [{"text": block.content}, *map(_image, block.images)],
                "status": "error" if block.is_error else "success",
            }
        }
    if kind is ReasoningBlock and block.signature and not block.redacted:
        text = {"text": block.text, "signature": block.signature}
        return {"reasoningContent": {"reasoningText": text}}
    return None


def _image(image: Image) -> dict[str, Any]:
    """An image in a toolResult: Converse takes the raw bytes (boto3 base64-encodes them)."""
    kind = image.media_type.removeprefix("image/")
    return {"image": {"format": kind, "source": {"bytes": base64.b64decode(image.data)}}}


def botocore_error_info(exc: BaseException, request_chars: int) -> ErrorInfo | None:
    """An ErrorInfo for a botocore/urllib3 exception, else None."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    response = getattr(exc, "response", None)
    if "ClientError" in names and isinstance(response, dict):
        error = response.get("Error", {})
        meta = response.get("ResponseMetadata", {})
        code = str(error.get("Code", ""))
        headers = meta.get("HTTPHeaders", {}) or {}
        status = meta.get("HTTPStatusCode")
        return ErrorInfo(
            "bedrock",
            status=status if isinstance(status, int) and status != 200 else None,
            code=code[:1].upper() + code[1:],
            message=str(error.get("Message", "")) or str(exc),
            retry_after=parse_retry_after(headers.get("retry-after")),
            request_chars=request_chars,
        )
    info = ErrorInfo("bedrock", message=f"{type(exc).__name__}: {exc}", request_chars=request_chars)
    if names & {"ReadTimeoutError", "ConnectTimeoutError", "TimeoutError"}:
        info.transport = "timeout"
    elif names & {"ConnectionClosedError", "ProtocolError", "ResponseStreamingError"}:
        info.transport = "disconnected"
    elif names & {"EndpointConnectionError", "ConnectionError", "HTTPClientError"}:
        info.transport = "connection"
    elif names & {"NoCredentialsError", "PartialCredentialsError"}:
        info.code = "UnrecognizedClientException"
    elif "ParamValidationError" in names:
        info.code = FORMAT_CODE
    elif "ParserError" in names and type(exc).__module__ == "botocore.eventstream":
        info.code = FORMAT_CODE
        info.message = (
            f"the response stream could not be decoded as AWS event-stream "
            f"({type(exc).__name__}: {exc})"
        )
    else:
        return None
    return info


def _tool(spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "toolSpec": {
            "name": spec["name"],
            "description": spec.get("description") or spec["name"],
            "inputSchema": {"json": spec.get("input_schema") or {"type": "object"}},
        }
    }


def forces_tools(model: str) -> bool:
    """Whether Converse takes a forced ``toolChoice`` for ``model`` (Anthropic Claude,
    Amazon Nova; cross-region ids such as ``us.anthropic...`` included)."""
    name = model.lower()
    return "anthropic." in name or "amazon.nova" in name


def add_output_tool(body: dict[str, Any], output: OutputTool) -> None:
    """Offer the final-answer tool and force it (``any`` beside other tools)."""
    config = body.setdefault("toolConfig", {"tools": []})
    config["tools"] = [*config["tools"], _tool(output.spec())]
    config["toolChoice"] = {"tool": {"name": output.name}} if output.alone else {"any": {}}


def add_tool_choice(body: dict[str, Any], request: ModelRequest) -> None:
    """``ModelRequest.tool_choice`` in Converse form (``required`` is ``any``). Converse
    has no ``none``: the tools are left out, which it refuses once the conversation
    holds tool calls (then this raises rather than let the model call tools)."""
    choice = request.tool_choice
    if choice is None or "toolConfig" not in body:
        return
    if choice == "none":
        if any(type(b) in (ToolCall, ToolResult) for m in request.messages for b in m.content):
            raise ConfigurationError(
                "BedrockModel cannot send tool_choice='none' here: Converse has no 'none' "
                "choice, and once the conversation holds tool calls it needs the tools "
                "offered; use 'auto' or forbid the call in a BeforeToolCall hook instead"
            )
        del body["toolConfig"]
        return
    config = body["toolConfig"]
    if choice == "auto":
        config["toolChoice"] = {"auto": {}}
    elif choice == "required":
        config["toolChoice"] = {"any": {}}
    else:
        config["toolChoice"] = {"tool": {"name": choice}}
