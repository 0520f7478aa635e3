"""Structured output through a forced final-answer tool (Anthropic, Bedrock).

These APIs have no JSON-schema response format; their native way to constrain an
answer to a schema is a tool: the request offers a ``final_answer`` tool whose input
schema is the output type's JSON schema and forces its use (``tool_choice`` names
it; with other tools offered too it is ``any``, so the model may still call them
first). The adapter turns that tool's input back into the answer's text (JSON), so
the loop validates it like any answer and a failure goes back to the model as text.

A non-object schema (a list, a string ...) is wrapped as ``{"value": ...}`` (tool
inputs are objects) and unwrapped again. Text the model wrote beside the
final-answer call is dropped: the call's input is the answer.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any

from tether.events import ModelStop, ModelStreamEvent, TextDelta, ToolCallDelta
from tether.models.base import ModelRequest

NAME = "final_answer"
_WRAP = "value"


@dataclass(frozen=True, slots=True)
class OutputTool:
    """The final-answer tool of one request."""

    name: str
    input_schema: dict[str, Any]
    description: str
    wrapped: bool
    alone: bool
    """No other tool is offered: the choice names this tool (else the model must call
    some tool, ``any``)."""

    @classmethod
    def of(cls, request: ModelRequest) -> OutputTool | None:
        """The tool for ``request``, or None when it asks for no structured output."""
        schema = request.output_schema
        if schema is None:
            return None
        taken = {spec["name"] for spec in request.tool_specs}
        name = NAME
        while name in taken:
            name += "_"
        wrapped = schema.get("type") != "object"
        if wrapped:
            inner = {k: v for k, v in schema.items() if k != "$defs"}
            wrapper: dict[str, Any] = {
                "type": "object",
                "properties": {_WRAP: inner},
                "required": [_WRAP],
            }
            if "$defs" in schema:  # refs (#/$defs/...) resolve from the root
                wrapper["$defs"] = schema["$defs"]
            schema = wrapper
        description = (
            f"Give your final answer ({request.output_name}) by calling this tool once, "
            "with the answer as its input. Call it only when you are done."
        )
        return cls(name, schema, description, wrapped, not request.tool_specs)

    def spec(self) -> dict[str, Any]:
        """The tool as a tether tool spec (each adapter converts specs to its layout)."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }

    def answer(self, arguments: dict[str, Any] | str) -> str:
        """The answer's text: the call's input as JSON (unwrapped)."""
        value: Any = arguments
        if isinstance(arguments, str):
            if not self.wrapped:
                return arguments.strip() or "{}"
            try:
                value = json.loads(arguments)
            except ValueError:
                return arguments  # not JSON: the loop's validation says so to the model
        if self.wrapped and isinstance(value, dict) and _WRAP in value:
            value = value[_WRAP]
        return json.dumps(value, ensure_ascii=False)


async def answer_from_tool(
    events: AsyncGenerator[ModelStreamEvent, None], tool: OutputTool
) -> AsyncGenerator[ModelStreamEvent, None]:
    """``events`` of one attempt with the final-answer call turned into the answer's text.

    Text is held back until the stream ends (it is dropped when the final-answer tool was
    called); other tool calls pass through; a response whose only call was the final
    answer stops with ``end_turn``.
    """
    held: list[ModelStreamEvent] = []
    index: int | None = None
    parts: list[str] = []
    whole: dict[str, Any] | None = None
    others = False
    try:
        async for event in events:
            kind = type(event)
            if kind is TextDelta:
                held.append(event)
                continue
            if kind is ToolCallDelta:
                call: ToolCallDelta = event  # type: ignore[assignment]
                if index is None and call.name == tool.name:
                    index = call.index
                if call.index == index:
                    if isinstance(call.arguments, dict):
                        whole = call.arguments
                    elif call.arguments:
                        parts.append(call.arguments)
                    continue
                others = True
            if kind is ModelStop:
                stop: ModelStop = event  # type: ignore[assignment]
                if index is None:
                    for item in held:
                        yield item
                else:
                    yield TextDelta(tool.answer(whole if whole is not None else "".join(parts)))
                    if not others and stop.stop_reason == "tool_use":
                        stop = ModelStop("end_turn", stop.usage)
                yield stop
                continue
            yield event
    finally:
        await events.aclose()
