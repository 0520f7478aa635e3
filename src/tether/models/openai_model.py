"""OpenAIModel: Chat Completions through the official ``openai`` SDK (extra ``tether[openai]``).

Works with any compatible server through ``base_url`` (vLLM, Ollama, llama.cpp,
LM Studio). The SDK's own retries are off; :class:`ProviderModel` retries.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import Any

from tether.events import ModelStop, ModelStreamEvent, ReasoningDelta, TextDelta, ToolCallDelta
from tether.models.base import ModelRequest
from tether.models.failover import ErrorInfo, snippet
from tether.models.openai_format import (
    messages_param,
    stop_reason,
    tool_choice_param,
    tools_param,
    usage_from,
)
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
from tether.models.sdk_stream import finish_stream
from tether.models.textsink import TextSink

log = logging.getLogger("tether.models")

_OPTIONAL_FIELDS = ("stream_options", "tool_choice")
"""Request fields some compatible servers refuse (400/422 naming the field): dropped, once."""


class OpenAIModel(ProviderModel):
    """An OpenAI (or OpenAI-compatible) chat model.

    >>> model = OpenAIModel("gpt-4.1")                      # key from OPENAI_API_KEY
    >>> local = OpenAIModel("qwen3", base_url="http://127.0.0.1:8080/v1", api_key="none",
    ...                     lenient_tool_calls=True)

    ``api_keys`` rotates over several keys; ``streaming=False`` asks for whole
    responses (a server that answers a streamed request with one JSON completion
    is read as a whole response too); ``params`` adds request fields (``temperature`` ...).
    """

    provider = "openai"
    cached_in_input = True
    """Chat Completions' prompt_tokens include the cached ones (tether.context calibration)."""
    env_var = "OPENAI_API_KEY"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        api_keys: Sequence[str] = (),
        base_url: str | None = None,
        default_headers: Mapping[str, str] | None = None,
        timeout: float = 600.0,
        max_tokens: int | None = None,
        streaming: bool = True,
        stream_usage: bool = True,
        lenient_tool_calls: bool = False,
        params: Mapping[str, Any] | None = None,
        retry: RetryPolicy | None = None,
        compress: CompressHook | None = None,
        provider: str = "openai",
        context_window: int | None = None,
    ) -> None:
        keys = resolve_keys(
            f"OpenAIModel({model!r})",
            self.env_var,
            api_key,
            api_keys,
            ' (a local server that ignores keys still needs one, e.g. api_key="none")',
        )
        super().__init__(
            model, api_keys=keys, retry=retry, compress=compress, context_window=context_window
        )
        self.provider = provider
        self.streaming = streaming
        self.stream_usage = stream_usage
        self.lenient_tool_calls = lenient_tool_calls
        self.max_tokens = max_tokens
        self.params = dict(params or {})
        self.refused_fields: set[str] = set()
        """Optional fields the server refused (``stream_options``, ``tool_choice``): no
        longer sent by this model."""
        openai = import_sdk("openai", "OpenAIModel", "openai")
        self._completion_type: Any = openai.types.chat.ChatCompletion
        self._clients = sdk_clients(openai.AsyncOpenAI, keys, base_url, default_headers, timeout)

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": messages_param(request)}
        if request.tool_specs:
            body["tools"] = tools_param(request.tool_specs)
        if request.tool_choice is not None:
            body["tool_choice"] = tool_choice_param(request.tool_choice)
        limit = request.max_tokens or self.max_tokens
        if limit is not None:
            body["max_tokens"] = limit
        if request.output_schema is not None:  # native structured output
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": request.output_name,
                    "schema": request.output_schema,
                    "strict": False,
                },
            }
        body.update(self.params)
        for field in self.refused_fields:
            body.pop(field, None)
        return body

    async def _create(self, client: Any, body: dict[str, Any]) -> Any:
        """``chat.completions.create``; a compatible server that refuses an optional field
        (400/422 naming it) is asked again without it, and the field is not sent again."""
        while True:
            try:
                return await client.chat.completions.create(**body)
            except Exception as exc:
                field = _refused_field(exc, body)
                if field is None:
                    raise
                self.refused_fields.add(field)
                log.warning("%s refused %r: sending requests without it", self.name, field)
                body = {k: v for k, v in body.items() if k != field}

    def _sink(self, request: ModelRequest) -> TextSink:
        names = [spec["name"] for spec in request.tool_specs]
        return TextSink(lenient=self.lenient_tool_calls and bool(names), tool_names=names)

    def _attempt(
        self, request: ModelRequest, api_key: str | None
    ) -> AsyncGenerator[ModelStreamEvent, None]:
        client = self._clients[self._key_index]
        if self.streaming:
            return self._streamed(client, request)
        return self._whole(client, request)

    async def _whole(
        self, client: Any, request: ModelRequest
    ) -> AsyncGenerator[ModelStreamEvent, None]:
        completion = await self._create(client, self._body(request))
        async for event in self._completion_events(completion, request):
            yield event

    async def _completion_events(
        self, completion: Any, request: ModelRequest
    ) -> AsyncGenerator[ModelStreamEvent, None]:
        choices = getattr(completion, "choices", None)
        if not choices:
            raise ResponseFormatError(f"{self.name} returned an empty completion (no choices)")
        choice = choices[0]
        message = choice.message
        sink = self._sink(request)
        reasoning = _reasoning_of(message)
        if reasoning:
            yield ReasoningDelta(reasoning)
        if message.content:
            for event in sink.text(message.content):
                yield event
        calls = message.tool_calls or []
        for index, call in enumerate(calls):
            yield ToolCallDelta(index, call.id, call.function.name, call.function.arguments or "")
        for event in sink.finish(len(calls), bool(calls)):
            yield event
        yield ModelStop(stop_reason(choice.finish_reason), usage_from(completion.usage))

    async def _streamed(
        self, client: Any, request: ModelRequest
    ) -> AsyncGenerator[ModelStreamEvent, None]:
        body = self._body(request)
        body["stream"] = True
        if self.stream_usage and "stream_options" not in self.refused_fields:
            body["stream_options"] = {"include_usage": True}
        stream = await self._create(client, body)
        completion = await self._whole_answer(stream)
        if completion is not None:
            async for event in self._completion_events(completion, request):
                yield event
            return
        sink = self._sink(request)
        finish: str | None = None
        usage = None
        chunks = 0
        max_index = -1
        try:
            async for chunk in stream:
                chunks += 1
                if chunk.usage is not None:
                    usage = chunk.usage
                for choice in chunk.choices or ():
                    delta = choice.delta
                    if delta is not None:
                        reasoning = _reasoning_of(delta)
                        if reasoning:
                            yield ReasoningDelta(reasoning)
                        content = delta.content
                        if content:
                            if sink.passthrough(content):
                                yield TextDelta(content)
                            else:
                                for event in sink.text(content):
                                    yield event
                        if delta.tool_calls:
                            for call in delta.tool_calls:
                                index = call.index if call.index is not None else max_index + 1
                                max_index = max(max_index, index)
                                function = call.function
                                yield ToolCallDelta(
                                    index,
                                    call.id,
                                    function.name if function is not None else None,
                                    (function.arguments or "") if function is not None else "",
                                )
                    if choice.finish_reason:
                        finish = choice.finish_reason
        finally:
            await finish_stream(stream)
        if finish is None:
            if chunks == 0:
                raise ResponseFormatError(f"{self.name} returned an empty completion (no chunks)")
            raise StreamBrokenError(
                f"the stream of {self.name} ended after {chunks} chunk(s) without a finish_reason"
            )
        for event in sink.finish(max_index + 1, max_index >= 0):
            yield event
        yield ModelStop(stop_reason(finish), usage_from(usage))

    async def _whole_answer(self, stream: Any) -> Any | None:
        """The completion of a server that answered ``stream=true`` with one JSON body
        (llm-katan does for tool requests), else None (a real event stream)."""
        response: Any = getattr(stream, "response", None)
        if response is None or "json" not in str(response.headers.get("content-type", "")).lower():
            return None
        try:
            data = json.loads(await response.aread())
        finally:
            await stream.close()
        if not isinstance(data, dict):
            raise ResponseFormatError(
                f"{self.name} answered a streamed request with JSON that is not a completion "
                f"object: {snippet(data)}"
            )
        return self._completion_type.construct(**data)

    def _error_info(self, exc: BaseException, request: ModelRequest) -> ErrorInfo | None:
        return http_error_info(exc, self.provider, request_size(request))


def _refused_field(exc: BaseException, body: dict[str, Any]) -> str | None:
    """The optional field a 400/422 names (``tool_choice`` or "tool choice"), if ``body``
    holds it."""
    if getattr(exc, "status_code", None) not in (400, 422):
        return None
    text = f"{getattr(exc, 'message', '')} {getattr(exc, 'body', '')}"
    named = [f for f in _OPTIONAL_FIELDS if f in text or f.replace("_", " ") in text]
    return next((f for f in named if f in body), None)


def _reasoning_of(obj: Any) -> str | None:
    """Reasoning text of compatible servers (``reasoning_content`` or ``reasoning``)."""
    extra = getattr(obj, "model_extra", None)
    if not extra:
        return None
    value = extra.get("reasoning_content") or extra.get("reasoning")
    return value if isinstance(value, str) and value else None
