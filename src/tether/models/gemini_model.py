"""GeminiModel: ``generateContent`` through the official ``google-genai`` SDK (extra ``tether[gemini]``).

The Gemini API with an API key, or Vertex AI (``vertexai=True``) with Google's
application default credentials. The SDK's own retries are off; :class:`ProviderModel`
retries, rotates keys and falls back.
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from typing import Any

from tether.errors import ConfigurationError
from tether.events import ModelStop, ModelStreamEvent, ReasoningDelta, TextDelta, ToolCallDelta
from tether.models.base import ModelRequest
from tether.models.failover import ErrorInfo
from tether.models.gemini_errors import gemini_error_info
from tether.models.gemini_format import (
    MALFORMED,
    blocked_text,
    contents_param,
    enum_name,
    local_id,
    signature_of,
    stop_reason,
    system_instruction,
    tool_config_param,
    tools_param,
    usage_from,
)
from tether.models.output_tool import OutputTool, answer_from_tool
from tether.models.resilient import (
    CompressHook,
    ProviderModel,
    ResponseFormatError,
    StreamBrokenError,
    import_sdk,
    request_size,
    resolve_keys,
)
from tether.models.retry import RetryPolicy
from tether.models.textsink import TextSink

_THINKING = re.compile(r"gemini-(2\.5|[3-9])|thinking", re.I)
"""Model names that think (their thought summaries are asked for by default)."""


class GeminiModel(ProviderModel):
    """A Gemini model over ``generateContent`` / ``streamGenerateContent``.

    >>> model = GeminiModel("gemini-2.5-flash")             # key from GEMINI_API_KEY
    >>> vertex = GeminiModel("gemini-2.5-pro", vertexai=True, project="p", location="us-central1")

    ``thoughts`` asks for thought summaries (None: on for thinking models, gemini-2.5
    and later); ``thinking_budget`` caps thinking tokens; ``params`` adds
    ``GenerateContentConfig`` fields (``temperature``, ``safety_settings`` ...). An
    ``output_type`` is asked for natively (``response_json_schema``); with tools
    offered too, through a forced final-answer tool (``output_tool=False``: natively
    anyway, which Gemini 3 accepts).
    """

    provider = "gemini"
    cached_in_input = True
    """promptTokenCount includes the cached tokens (tether.context calibration)."""
    env_var = "GEMINI_API_KEY"

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
        thoughts: bool | None = None,
        thinking_budget: int | None = None,
        params: Mapping[str, Any] | None = None,
        retry: RetryPolicy | None = None,
        compress: CompressHook | None = None,
        context_window: int | None = None,
        output_tool: bool = True,
        vertexai: bool = False,
        project: str | None = None,
        location: str | None = None,
    ) -> None:
        keys: list[str] = []
        if not vertexai:
            if not api_key and not api_keys and not os.environ.get(self.env_var):
                api_key = os.environ.get("GOOGLE_API_KEY")  # the SDK's other variable
            keys = resolve_keys(
                f"GeminiModel({model!r})",
                self.env_var,
                api_key,
                api_keys,
                " (or GOOGLE_API_KEY; for Vertex AI pass vertexai=True)",
            )
        super().__init__(
            model, api_keys=keys, retry=retry, compress=compress, context_window=context_window
        )
        self.streaming = streaming
        self.max_tokens = max_tokens
        self.thoughts = bool(_THINKING.search(model)) if thoughts is None else thoughts
        self.thinking_budget = check_budget(thinking_budget)
        self.output_tool = output_tool
        self.params = dict(params or {})
        genai = import_sdk("google.genai", "GeminiModel", "gemini")
        options = genai.types.HttpOptions(
            base_url=base_url,
            headers=dict(default_headers or {}),
            timeout=int(timeout * 1000),  # milliseconds
        )
        if vertexai:
            try:
                client = genai.Client(
                    vertexai=True, project=project, location=location, http_options=options
                )
            except Exception as exc:  # google.auth found no credentials, no project ...
                raise ConfigurationError(
                    f"GeminiModel({model!r}, vertexai=True) could not set up Vertex AI "
                    f"({type(exc).__name__}: {exc}); pass project=... and location=... and "
                    "set up application default credentials (gcloud auth application-default "
                    "login or GOOGLE_APPLICATION_CREDENTIALS)"
                ) from exc
            self._clients = [client]
        else:
            self._clients = [genai.Client(api_key=key, http_options=options) for key in keys]
        self._types: Any = genai.types

    def _config(self, request: ModelRequest, output: OutputTool | None) -> dict[str, Any]:
        config: dict[str, Any] = {"automatic_function_calling": {"disable": True}}
        system = system_instruction(request)
        if system:
            config["system_instruction"] = system
        specs = list(request.tool_specs)
        if output is not None:
            specs.append(output.spec())
            config["tool_config"] = {"function_calling_config": {"mode": "ANY"}}
        elif request.output_schema is not None:  # native structured output
            config["response_mime_type"] = "application/json"
            config["response_json_schema"] = request.output_schema
        if specs:
            config["tools"] = tools_param(specs)
        if request.tool_choice is not None:  # a hook's choice for this call wins
            config["tool_config"] = tool_config_param(request.tool_choice)
        limit = request.max_tokens or self.max_tokens
        if limit is not None:
            config["max_output_tokens"] = limit
        if self.thoughts or self.thinking_budget is not None:
            thinking: dict[str, Any] = {"include_thoughts": self.thoughts}
            if self.thinking_budget is not None:
                thinking["thinking_budget"] = self.thinking_budget
            config["thinking_config"] = thinking
        config.update(self.params)
        return config

    def _output(self, request: ModelRequest) -> OutputTool | None:
        if request.output_schema is None or not request.tool_specs or not self.output_tool:
            return None
        return OutputTool.of(request)

    def _attempt(
        self, request: ModelRequest, api_key: str | None
    ) -> AsyncGenerator[ModelStreamEvent, None]:
        output = self._output(request)
        events = self._events(self._clients[self._key_index], request, output)
        return events if output is None else answer_from_tool(events, output)

    async def _events(
        self, client: Any, request: ModelRequest, output: OutputTool | None
    ) -> AsyncGenerator[ModelStreamEvent, None]:
        types = self._types
        body = {  # typed here, so every nested field is sent under its wire name
            "model": self.model,
            "contents": [types.Content.model_validate(c) for c in contents_param(request)],
            "config": types.GenerateContentConfig.model_validate(self._config(request, output)),
        }
        reader = _Reader(self.name)
        if not self.streaming:
            response = await client.aio.models.generate_content(**body)
            for event in reader.chunk(response):
                yield event
        else:
            stream: AsyncIterator[Any] = await client.aio.models.generate_content_stream(**body)
            try:
                async for chunk in stream:
                    for event in reader.chunk(chunk):
                        yield event
            finally:
                close = getattr(stream, "aclose", None)
                if close is not None:
                    await close()
        for event in reader.finish():
            yield event

    def _error_info(self, exc: BaseException, request: ModelRequest) -> ErrorInfo | None:
        return gemini_error_info(exc, self.provider, request_size(request))


class _Reader:
    """Turns GenerateContentResponse chunks (or one whole response) into tether events."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.sink = TextSink()
        self.calls = 0
        self.chunks = 0
        self.finish_reason: str | None = None
        self.usage: Any = None
        self.blocked: str | None = None

    def chunk(self, response: Any) -> list[ModelStreamEvent]:
        self.chunks += 1
        out: list[ModelStreamEvent] = []
        if response.usage_metadata is not None:
            self.usage = response.usage_metadata
        feedback = response.prompt_feedback
        reason = enum_name(getattr(feedback, "block_reason", None))
        if reason and not response.candidates:
            self.blocked = blocked_text(
                "prompt", reason, feedback.safety_ratings, feedback.block_reason_message
            )
            self.finish_reason = "SAFETY"
            return out
        for candidate in (response.candidates or ())[:1]:
            content = candidate.content
            for part in (content.parts if content is not None else None) or ():
                out += self._part(part)
            finish = enum_name(candidate.finish_reason)
            if finish:
                self.finish_reason = finish
                if stop_reason(finish) == "content_filter" and not self.sink.emitted:
                    self.blocked = blocked_text("response", finish, candidate.safety_ratings)
        return out

    def _part(self, part: Any) -> list[ModelStreamEvent]:
        out: list[ModelStreamEvent] = []
        call = part.function_call
        call_id = ""
        if call is not None:
            call_id = call.id or local_id(self.calls)
            out.append(ToolCallDelta(self.calls, call_id, call.name or "", dict(call.args or {})))
            self.calls += 1
        elif part.text:
            if part.thought:
                out.append(ReasoningDelta(part.text))
            elif self.sink.passthrough(part.text):
                out.append(TextDelta(part.text))
            else:
                out += self.sink.text(part.text)
        if part.thought_signature:
            # before the call, so the assembler files thought text and signature together
            out.insert(
                0, ReasoningDelta("", signature=signature_of(call_id, part.thought_signature))
            )
        return out

    def finish(self) -> list[ModelStreamEvent]:
        if self.finish_reason is None:
            if self.chunks == 0:
                raise ResponseFormatError(f"{self.name} returned an empty stream")
            raise StreamBrokenError(
                f"the stream of {self.name} ended after {self.chunks} chunk(s) without a "
                "finishReason"
            )
        if self.finish_reason in MALFORMED:
            raise ResponseFormatError(
                f"{self.name} could not produce a valid function call "
                f"(finishReason {self.finish_reason})"
            )
        out: list[ModelStreamEvent] = list(self.sink.finish(self.calls, True))
        if self.blocked is not None:
            out.append(TextDelta(self.blocked))
        stop = stop_reason(self.finish_reason)
        if self.calls and stop == "end_turn":
            stop = "tool_use"
        out.append(ModelStop(stop, usage_from(self.usage)))
        return out


def check_budget(budget: int | None) -> int | None:
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int)):
        raise ConfigurationError(f"GeminiModel(thinking_budget=...) must be an int, got {budget!r}")
    return budget
