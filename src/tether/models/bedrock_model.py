"""BedrockModel: Converse / ConverseStream through boto3 (extra ``tether[bedrock]``).

boto3 is synchronous: each request runs in a worker thread that feeds the
event loop through a queue, so the loop never blocks. botocore's own retries
are off (``total_max_attempts=1``); :class:`ProviderModel` retries.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import AsyncGenerator
from typing import Any

from tether.errors import ConfigurationError
from tether.events import ModelStop, ModelStreamEvent, ReasoningDelta, TextDelta, ToolCallDelta
from tether.models.base import ModelRequest
from tether.models.bedrock_format import (
    add_output_tool,
    add_tool_choice,
    botocore_error_info,
    forces_tools,
    request_body,
    stop_reason,
    usage_from,
)
from tether.models.cache import bedrock_breakpoints, bedrock_caches
from tether.models.failover import ErrorInfo
from tether.models.output_tool import OutputTool, answer_from_tool
from tether.models.resilient import (
    CompressHook,
    ProviderModel,
    ResponseFormatError,
    StreamBrokenError,
    request_size,
)
from tether.models.retry import RetryPolicy
from tether.models.textsink import TextSink

_END = object()


class BedrockModel(ProviderModel):
    """A model on Amazon Bedrock (any model Converse supports).

    >>> model = BedrockModel("anthropic.claude-3-5-sonnet-20240620-v1:0", region="us-east-1")

    Credentials come from the AWS chain (environment, profile, SSO ...) unless
    given; the region from ``region`` or AWS_REGION / AWS_DEFAULT_REGION.
    """

    provider = "bedrock"
    env_var = "AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (or AWS_PROFILE)"

    def __init__(
        self,
        model: str,
        *,
        region: str | None = None,
        endpoint_url: str | None = None,
        profile: str | None = None,
        aws_access_key_id: str | None = None,
        aws_secret_access_key: str | None = None,
        aws_session_token: str | None = None,
        timeout: float = 600.0,
        max_tokens: int | None = 4096,
        streaming: bool = True,
        retry: RetryPolicy | None = None,
        compress: CompressHook | None = None,
        context_window: int | None = None,
        prompt_cache: bool | None = None,
        output_tool: bool | None = None,
    ) -> None:
        super().__init__(model, retry=retry, compress=compress, context_window=context_window)
        self.max_tokens = max_tokens
        self.prompt_cache = bedrock_caches(model) if prompt_cache is None else prompt_cache
        """``cachePoint`` blocks on the system prompt, tools and conversation end; None
        (default) means on for the models Bedrock caches for (Claude 3.5 Haiku and later,
        Nova)."""
        self.output_tool = forces_tools(model) if output_tool is None else output_tool
        """Structured output (``output_type``) through a forced final-answer tool
        (tether.models.output_tool); None (default) means on for the models whose
        Converse takes a forced ``toolChoice`` (Anthropic Claude, Amazon Nova); off: the
        schema in the prompt only."""
        self.streaming = streaming
        try:
            import boto3  # type: ignore[import-untyped,unused-ignore]
            from botocore.config import Config  # type: ignore[import-untyped,unused-ignore]
        except ImportError as exc:
            raise ConfigurationError(
                "BedrockModel needs boto3: pip install 'tether[bedrock]'"
            ) from exc
        session = boto3.Session(
            aws_access_key_id=aws_access_key_id,
            aws_secret_access_key=aws_secret_access_key,
            aws_session_token=aws_session_token,
            profile_name=profile,
            region_name=region,
        )
        region = session.region_name or os.environ.get("AWS_REGION")
        if not region:
            raise ConfigurationError(
                f"BedrockModel({model!r}) has no AWS region: pass region=... or set AWS_REGION "
                "(or AWS_DEFAULT_REGION)"
            )
        if session.get_credentials() is None:
            raise ConfigurationError(
                f"BedrockModel({model!r}) found no AWS credentials: set AWS_ACCESS_KEY_ID and "
                "AWS_SECRET_ACCESS_KEY (or AWS_PROFILE), or pass aws_access_key_id=... and "
                "aws_secret_access_key=..."
            )
        config = Config(
            retries={"total_max_attempts": 1, "mode": "standard"},
            read_timeout=timeout,
            connect_timeout=min(timeout, 60.0),
        )
        self._client = session.client(
            "bedrock-runtime", region_name=region, endpoint_url=endpoint_url, config=config
        )

    def _attempt(
        self, request: ModelRequest, api_key: str | None
    ) -> AsyncGenerator[ModelStreamEvent, None]:
        body = request_body(self.model, request, request.max_tokens or self.max_tokens)
        output = OutputTool.of(request) if self.output_tool else None
        if output is not None:
            add_output_tool(body, output)
        if request.tool_choice is not None:  # a hook's choice for this call wins
            add_tool_choice(body, request)
        if self.prompt_cache:
            bedrock_breakpoints(body)
        events = self._streamed(body) if self.streaming else self._whole(body)
        return events if output is None else answer_from_tool(events, output)

    async def _whole(self, body: dict[str, Any]) -> AsyncGenerator[ModelStreamEvent, None]:
        response = await asyncio.to_thread(self._client.converse, **body)
        message = (response.get("output") or {}).get("message")
        if not message:
            raise ResponseFormatError(f"{self.name} returned no output message")
        sink = TextSink()
        calls = 0
        for block in message.get("content") or ():
            if "text" in block:
                for event in sink.text(block["text"]):
                    yield event
            elif "toolUse" in block:
                use = block["toolUse"]
                yield ToolCallDelta(
                    calls, use["toolUseId"], use["name"], dict(use.get("input") or {})
                )
                calls += 1
            elif "reasoningContent" in block:
                reasoning = block["reasoningContent"].get("reasoningText") or {}
                yield ReasoningDelta(
                    reasoning.get("text", ""), signature=reasoning.get("signature")
                )
        for event in sink.finish(calls, True):
            yield event
        yield ModelStop(stop_reason(response.get("stopReason")), usage_from(response.get("usage")))

    async def _streamed(self, body: dict[str, Any]) -> AsyncGenerator[ModelStreamEvent, None]:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Any] = asyncio.Queue()
        holder: dict[str, Any] = {}
        stop_flag = threading.Event()

        def put(item: Any) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, item)
            except RuntimeError:  # the loop is closed: nobody is listening any more
                stop_flag.set()

        def produce() -> None:
            try:
                response = self._client.converse_stream(**body)
                holder["stream"] = stream = response["stream"]
                for event in stream:
                    if stop_flag.is_set():
                        break
                    put(event)
                put(_END)
            except BaseException as exc:
                put(exc)

        threading.Thread(target=produce, name="tether-bedrock-stream", daemon=True).start()
        sink = TextSink()
        tool_index: dict[int, int] = {}
        stop: str | None = None
        usage = None
        events = 0
        try:
            while True:
                item = await queue.get()
                if item is _END:
                    break
                if isinstance(item, BaseException):
                    raise item
                events += 1
                if "contentBlockDelta" in item:
                    part = item["contentBlockDelta"]
                    delta = part["delta"]
                    if "text" in delta:
                        text = delta["text"]
                        if sink.passthrough(text):
                            yield TextDelta(text)
                        else:
                            for event in sink.text(text):
                                yield event
                    elif "toolUse" in delta:
                        index = tool_index.setdefault(part["contentBlockIndex"], len(tool_index))
                        yield ToolCallDelta(index, arguments=delta["toolUse"].get("input", ""))
                    elif "reasoningContent" in delta:
                        yield _reasoning(delta["reasoningContent"])
                elif "contentBlockStart" in item:
                    start = item["contentBlockStart"]
                    use = (start.get("start") or {}).get("toolUse")
                    if use:
                        index = tool_index.setdefault(start["contentBlockIndex"], len(tool_index))
                        yield ToolCallDelta(index, use.get("toolUseId"), use.get("name"))
                elif "messageStop" in item:
                    stop = item["messageStop"].get("stopReason")
                elif "metadata" in item:
                    usage = item["metadata"].get("usage")
        finally:
            stop_flag.set()
            stream = holder.get("stream")
            if stream is not None:
                stream.close()
        if stop is None:
            if events == 0:
                raise ResponseFormatError(f"{self.name} returned an empty stream")
            raise StreamBrokenError(
                f"the stream of {self.name} ended after {events} event(s) without messageStop"
            )
        for event in sink.finish(len(tool_index), True):
            yield event
        yield ModelStop(stop_reason(stop), usage_from(usage))

    def _error_info(self, exc: BaseException, request: ModelRequest) -> ErrorInfo | None:
        return botocore_error_info(exc, request_size(request))


def _reasoning(part: dict[str, Any]) -> ReasoningDelta:
    if "redactedContent" in part:
        return ReasoningDelta("", signature=str(part["redactedContent"]), redacted=True)
    return ReasoningDelta(part.get("text", ""), signature=part.get("signature"))
