"""AnthropicModel: Messages through the official ``anthropic`` SDK (extra ``tether[anthropic]``)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from tether.events import ModelStop, ModelStreamEvent, ReasoningDelta, TextDelta, ToolCallDelta
from tether.models.anthropic_format import (
    messages_param,
    stop_reason,
    system_param,
    tool_choice_param,
    tools_param,
    usage_from,
)
from tether.models.base import ModelRequest
from tether.models.cache import anthropic_breakpoints
from tether.models.failover import ErrorInfo, FailoverReason
from tether.models.output_tool import OutputTool, answer_from_tool
from tether.models.resilient import (
    CompressHook,
    ProviderModel,
    ResponseFormatError,
    StreamBrokenError,
    import_sdk,
    request_size,
    resolve_keys,
    sdk_clients,
)
from tether.models.retry import RetryPolicy
from tether.models.sdk_errors import http_error_info
from tether.models.textsink import TextSink


class AnthropicModel(ProviderModel):
    """A Claude model over the Messages API.

    >>> model = AnthropicModel("claude-sonnet-4-5")          # key from ANTHROPIC_API_KEY

    ``max_tokens`` is required by the API (default 4096); ``params`` adds
    request fields (``thinking``, ``temperature`` ...); ``streaming=False``
    asks for whole responses. An ``output_type`` is asked for with a forced
    final-answer tool (``output_tool=False``: the schema in the prompt only).

    ``base_url`` points at an Anthropic-compatible server. The SDK sends ``api_key`` in
    its own auth header (``Authorization: Bearer`` in anthropic 2.x); a server that
    expects another one, such as ``x-api-key``, gets it through ``default_headers``
    (sent on every request): ``default_headers={"x-api-key": key}``. A 401 from a
    custom ``base_url`` says so, naming the headers that were sent (never their values).
    """

    provider = "anthropic"
    env_var = "ANTHROPIC_API_KEY"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        api_keys: Sequence[str] = (),
        base_url: str | None = None,
        default_headers: Mapping[str, str] | None = None,
        timeout: float = 600.0,
        max_tokens: int = 4096,
        streaming: bool = True,
        params: Mapping[str, Any] | None = None,
        retry: RetryPolicy | None = None,
        compress: CompressHook | None = None,
        context_window: int | None = None,
        prompt_cache: bool = True,
        output_tool: bool = True,
    ) -> None:
        keys = resolve_keys(f"AnthropicModel({model!r})", self.env_var, api_key, api_keys)
        super().__init__(
            model, api_keys=keys, retry=retry, compress=compress, context_window=context_window
        )
        self.max_tokens = max_tokens
        self.prompt_cache = prompt_cache
        """Cache breakpoints on the system prompt, tools and conversation end
        (tether.models.cache); reads and writes show in ``result.usage``."""
        self.output_tool = output_tool
        """Structured output (``output_type``) through a forced final-answer tool
        (tether.models.output_tool); False: the schema in the prompt only."""
        self.streaming = streaming
        self.params = dict(params or {})
        anthropic = import_sdk("anthropic", "AnthropicModel", "anthropic")
        self.base_url = base_url
        self._clients = sdk_clients(
            anthropic.AsyncAnthropic, keys, base_url, default_headers, timeout
        )

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_tokens or self.max_tokens,
            "messages": messages_param(request),
        }
        system = system_param(request)
        if system:
            body["system"] = system
        if request.tool_specs:
            body["tools"] = tools_param(request.tool_specs)
        output = self._output(request)
        if output is not None:
            body["tools"] = [*body.get("tools", ()), *tools_param([output.spec()])]
            body["tool_choice"] = self._tool_choice(output)
        if request.tool_choice is not None:  # a hook's choice for this call wins
            body["tool_choice"] = tool_choice_param(request.tool_choice)
        if self.prompt_cache:
            anthropic_breakpoints(body)
        body.update(self.params)
        return body

    def _attempt(
        self, request: ModelRequest, api_key: str | None
    ) -> AsyncGenerator[ModelStreamEvent, None]:
        client = self._clients[self._key_index]
        events = self._streamed(client, request) if self.streaming else self._whole(client, request)
        output = self._output(request)
        return events if output is None else answer_from_tool(events, output)

    def _output(self, request: ModelRequest) -> OutputTool | None:
        if request.output_schema is None or not self.output_tool:
            return None
        return OutputTool.of(request)

    def _tool_choice(self, output: OutputTool) -> dict[str, Any]:
        thinking = self.params.get("thinking")
        if isinstance(thinking, dict) and thinking.get("type") not in (None, "disabled"):
            return {"type": "auto"}  # thinking refuses a forced choice: the prompt asks
        return {"type": "tool", "name": output.name} if output.alone else {"type": "any"}

    async def _whole(
        self, client: Any, request: ModelRequest
    ) -> AsyncGenerator[ModelStreamEvent, None]:
        message = await client.messages.create(**self._body(request))
        sink = TextSink()
        calls = 0
        for block in message.content or ():
            kind = block.type
            if kind == "text":
                for event in sink.text(block.text):
                    yield event
            elif kind == "thinking":
                yield ReasoningDelta(block.thinking, signature=block.signature)
            elif kind == "redacted_thinking":
                yield ReasoningDelta("", signature=block.data, redacted=True)
            elif kind == "tool_use":
                yield ToolCallDelta(calls, block.id, block.name, dict(block.input or {}))
                calls += 1
        for event in sink.finish(calls, True):
            yield event
        if not message.content and message.stop_reason is None:
            raise ResponseFormatError(f"{self.name} returned an empty message")
        yield ModelStop(stop_reason(message.stop_reason), usage_from(message.usage, None))

    async def _streamed(
        self, client: Any, request: ModelRequest
    ) -> AsyncGenerator[ModelStreamEvent, None]:
        body = self._body(request)
        body["stream"] = True
        stream = await client.messages.create(**body)
        sink = TextSink()
        start_usage: Any = None
        delta_usage: Any = None
        stop: str | None = None
        done = False
        events = 0
        tool_index: dict[int, int] = {}
        try:
            async for event in stream:
                events += 1
                kind = event.type
                if kind == "content_block_delta":
                    delta = event.delta
                    dtype = delta.type
                    if dtype == "text_delta":
                        text = delta.text
                        if sink.passthrough(text):
                            yield TextDelta(text)
                        else:
                            for item in sink.text(text):
                                yield item
                    elif dtype == "input_json_delta":
                        if delta.partial_json:
                            yield ToolCallDelta(
                                tool_index[event.index], arguments=delta.partial_json
                            )
                    elif dtype == "thinking_delta":
                        yield ReasoningDelta(delta.thinking)
                    elif dtype == "signature_delta":
                        yield ReasoningDelta("", signature=delta.signature)
                elif kind == "content_block_start":
                    block = event.content_block
                    if block.type == "tool_use":
                        index = tool_index[event.index] = len(tool_index)
                        yield ToolCallDelta(index, block.id, block.name)
                    elif block.type == "redacted_thinking":
                        yield ReasoningDelta("", signature=block.data, redacted=True)
                elif kind == "message_start":
                    start_usage = event.message.usage
                elif kind == "message_delta":
                    stop = event.delta.stop_reason or stop
                    delta_usage = event.usage
                elif kind == "message_stop":
                    done = True
        finally:
            await stream.close()
        if not done:
            if events == 0:
                raise ResponseFormatError(f"{self.name} returned an empty stream")
            raise StreamBrokenError(
                f"the stream of {self.name} ended after {events} event(s) without message_stop"
            )
        for item in sink.finish(len(tool_index), True):
            yield item
        yield ModelStop(stop_reason(stop), usage_from(start_usage, delta_usage))

    def _error_info(self, exc: BaseException, request: ModelRequest) -> ErrorInfo | None:
        return http_error_info(exc, self.provider, request_size(request))

    def _hint(self, reason: FailoverReason) -> str:
        """For a refused key at a custom ``base_url``: which header carried it."""
        if reason is not FailoverReason.AUTH or not self.base_url:
            return ""
        client = self._clients[self._key_index]
        sent = sorted(getattr(client, "auth_headers", {}) or {}) or ["no auth header"]
        extra = sorted(getattr(client, "_custom_headers", {}) or {})
        return (
            f"; the server at {_shown_url(self.base_url)} refused the credentials sent in "
            f"the {', '.join(sent)} header"
            + (f" (default_headers also sent: {', '.join(extra)})" if extra else "")
            + ": an Anthropic-compatible server may expect the key in another header; pass "
            "it with AnthropicModel(..., default_headers={'x-api-key': '<key>'}) (or the "
            "header the server documents)"
        )


def _shown_url(url: str) -> str:
    """``url`` without user info, query or fragment (they may carry credentials)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}" if parts.scheme else "(base_url)"
