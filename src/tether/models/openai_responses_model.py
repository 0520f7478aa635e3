"""OpenAIResponsesModel: the OpenAI Responses API through the ``openai`` SDK (``tether[openai]``).

Stateless: ``store=False`` and the whole conversation in ``input`` on every call
(the journal holds the history; ``previous_response_id`` is never used), with
``include=["reasoning.encrypted_content"]`` so reasoning items come back
encrypted, are journaled as signed ReasoningBlocks and are sent back next turn.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import Any

from tether.events import (
    ModelStop,
    ModelStopReason,
    ModelStreamEvent,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
)
from tether.models.base import ModelRequest
from tether.models.failover import ErrorInfo, snippet
from tether.models.openai_responses_format import (
    input_items,
    reasoning_signature,
    stop_reason,
    tool_choice_param,
    tools_param,
    usage_from,
)
from tether.models.resilient import (
    CompressHook,
    ProviderModel,
    ProviderReportedError,
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


class ResponseFailedError(ProviderReportedError):
    """A response reported ``response.failed`` or an ``error`` event; ProviderModel.stream
    turns it into a classified ProviderError (retried, rotated or fallen back on)."""


class OpenAIResponsesModel(ProviderModel):
    """An OpenAI model over the Responses API (``/v1/responses``).

    >>> model = OpenAIResponsesModel("o4-mini", params={"reasoning": {"effort": "low"}})

    ``encrypted_reasoning=False`` stops asking for encrypted reasoning (for a server
    that refuses ``include``); ``params`` adds request fields (``reasoning``,
    ``temperature`` ...); ``streaming=False`` asks for whole responses (a server that
    answers a streamed request with one JSON response is read as a whole response too).
    """

    provider = "openai-responses"
    cached_in_input = True
    """``input_tokens`` include the cached ones (tether.context calibration)."""
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
        encrypted_reasoning: bool = True,
        params: Mapping[str, Any] | None = None,
        retry: RetryPolicy | None = None,
        compress: CompressHook | None = None,
        context_window: int | None = None,
    ) -> None:
        keys = resolve_keys(f"OpenAIResponsesModel({model!r})", self.env_var, api_key, api_keys)
        super().__init__(
            model, api_keys=keys, retry=retry, compress=compress, context_window=context_window
        )
        self.streaming = streaming
        self.encrypted_reasoning = encrypted_reasoning
        self.max_tokens = max_tokens
        self.params = dict(params or {})
        openai = import_sdk("openai", "OpenAIResponsesModel", "openai")
        self._response_type: Any = openai.types.responses.Response
        self._clients = sdk_clients(openai.AsyncOpenAI, keys, base_url, default_headers, timeout)

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "input": input_items(request), "store": False}
        if self.encrypted_reasoning:
            body["include"] = ["reasoning.encrypted_content"]
        if request.system_prompt:
            body["instructions"] = request.system_prompt
        if request.tool_specs:
            body["tools"] = tools_param(request.tool_specs)
        if request.tool_choice is not None:
            body["tool_choice"] = tool_choice_param(request.tool_choice)
        limit = request.max_tokens or self.max_tokens
        if limit is not None:
            body["max_output_tokens"] = limit
        if request.output_schema is not None:
            body["text"] = {
                "format": {
                    "type": "json_schema",
                    "name": request.output_name,
                    "schema": request.output_schema,
                    "strict": False,
                }
            }
        body.update(self.params)
        return body

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
        response = await client.responses.create(**self._body(request))
        async for event in self._response_events(response):
            yield event

    async def _response_events(self, response: Any) -> AsyncGenerator[ModelStreamEvent, None]:
        _raise_failed(response)
        sink = TextSink()
        calls = 0
        for item in getattr(response, "output", None) or ():
            kind = getattr(item, "type", None)
            if kind == "reasoning":
                text = "\n\n".join(part.text for part in item.summary or ())
                for thought in _reasoning_events(item, text):
                    yield thought
            elif kind == "message":
                for part in item.content or ():
                    value = part.text if part.type == "output_text" else part.refusal
                    for event in sink.text(value or ""):
                        yield event
            elif kind == "function_call":
                yield ToolCallDelta(calls, item.call_id, item.name, item.arguments or "")
                calls += 1
        for event in sink.finish(calls, True):
            yield event
        if not response.output and response.status is None:
            raise ResponseFormatError(f"{self.name} returned an empty response")
        yield ModelStop(_stop(response), usage_from(response.usage))

    async def _streamed(
        self, client: Any, request: ModelRequest
    ) -> AsyncGenerator[ModelStreamEvent, None]:
        body = self._body(request)
        body["stream"] = True
        stream = await client.responses.create(**body)
        whole = await self._whole_answer(stream)
        if whole is not None:
            async for event in self._response_events(whole):
                yield event
            return
        sink = TextSink()
        calls: dict[int, int] = {}  # output_index -> tool call index
        argued: set[int] = set()  # tool calls whose arguments streamed
        reasoned: dict[int, int] = {}  # output_index -> summary parts streamed
        final: Any = None
        events = 0
        try:
            async for event in stream:
                events += 1
                kind = event.type
                if kind == "response.output_text.delta":
                    text = event.delta
                    if sink.passthrough(text):
                        yield TextDelta(text)
                    else:
                        for item in sink.text(text):
                            yield item
                elif kind == "response.function_call_arguments.delta":
                    index = calls.get(event.output_index)
                    if index is not None and event.delta:
                        argued.add(index)
                        yield ToolCallDelta(index, arguments=event.delta)
                elif kind in (
                    "response.reasoning_summary_text.delta",
                    "response.reasoning_text.delta",
                ):
                    parts = reasoned.setdefault(event.output_index, 0)
                    index = getattr(event, "summary_index", getattr(event, "content_index", 0))
                    sep = "\n\n" if index >= parts and parts else ""
                    reasoned[event.output_index] = max(parts, index + 1)
                    yield ReasoningDelta(sep + event.delta)
                elif kind == "response.output_item.added":
                    item = event.item
                    if item.type == "function_call":
                        index = calls[event.output_index] = len(calls)
                        yield ToolCallDelta(index, item.call_id, item.name)
                elif kind == "response.output_item.done":
                    item = event.item
                    if item.type == "reasoning":
                        streamed = event.output_index in reasoned
                        for out in _reasoning_events(item, "", streamed=streamed):
                            yield out
                    elif item.type == "function_call":
                        index = calls.get(event.output_index)
                        if index is None:  # a server that only sends finished items
                            index = calls[event.output_index] = len(calls)
                            yield ToolCallDelta(index, item.call_id, item.name)
                        if index not in argued and item.arguments:
                            argued.add(index)
                            yield ToolCallDelta(index, arguments=item.arguments)
                elif kind in ("response.completed", "response.incomplete"):
                    final = event.response
                elif kind == "response.failed":
                    _raise_failed(event.response)
                    raise ResponseFailedError("", f"{self.name} reported response.failed")
                elif kind == "error":
                    code = str(getattr(event, "code", "") or "")
                    raise ResponseFailedError(code, str(getattr(event, "message", "") or code))
        finally:
            await finish_stream(stream)
        if final is None:
            if events == 0:
                raise ResponseFormatError(f"{self.name} returned an empty stream")
            raise StreamBrokenError(
                f"the stream of {self.name} ended after {events} event(s) without "
                "response.completed"
            )
        for item in sink.finish(len(calls), True):
            yield item
        yield ModelStop(_stop(final), usage_from(final.usage))

    async def _whole_answer(self, stream: Any) -> Any | None:
        """The response of a server that answered ``stream=true`` with one JSON body,
        else None (a real event stream)."""
        response: Any = getattr(stream, "response", None)
        if response is None or "json" not in str(response.headers.get("content-type", "")).lower():
            return None
        try:
            data = json.loads(await response.aread())
        finally:
            await stream.close()
        if not isinstance(data, dict) or not isinstance(data.get("output"), list):
            raise ResponseFormatError(
                f"{self.name} answered a streamed request with JSON that is not a response "
                f"object: {snippet(data)}"
            )
        return self._response_type.construct(**data)

    def _error_info(self, exc: BaseException, request: ModelRequest) -> ErrorInfo | None:
        if isinstance(exc, ResponseFailedError):
            return ErrorInfo(
                self.provider,
                code=exc.code,
                message=exc.message,
                request_chars=request_size(request),
            )
        return http_error_info(exc, self.provider, request_size(request))


def _reasoning_events(item: Any, text: str, streamed: bool = False) -> list[ReasoningDelta]:
    """The events of a finished reasoning item: its text (already streamed or ``text``)
    closed by its signature, or a redacted block when only encrypted content came."""
    encrypted = getattr(item, "encrypted_content", None)
    signature = reasoning_signature(item.id, encrypted) if encrypted and item.id else None
    if signature is None:
        return [ReasoningDelta(text)] if text else []
    if not text and not streamed:
        return [ReasoningDelta("", signature=signature, redacted=True)]
    return [ReasoningDelta(text, signature=signature)]


def _stop(response: Any) -> ModelStopReason:
    details = getattr(response, "incomplete_details", None)
    return stop_reason(getattr(response, "status", None), getattr(details, "reason", None))


def _raise_failed(response: Any) -> None:
    if getattr(response, "status", None) != "failed":
        return
    error = getattr(response, "error", None)
    code = str(getattr(error, "code", "") or "")
    message = str(getattr(error, "message", "") or "") or f"the response failed ({code})"
    raise ResponseFailedError(code, message)
