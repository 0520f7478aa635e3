"""Images in tool results reach each provider in the form it accepts (recorded request bodies
of the fault server): Anthropic image blocks inside tool_result, Bedrock images in the
toolResult content, OpenAI chat a user message with image_url parts after the tool messages."""

from __future__ import annotations

import base64

import pytest
from fault_models import bedrock_at, claude_at, openai_at

from tether import Agent, tool
from tether.errors import InputError
from tether.messages import Image, Message, ToolResult
from tether.models import RetryPolicy
from tether.tools import ToolOutput

FAST = RetryPolicy(max_attempts=2, base_delay=0.001, max_delay=0.005, stale_timeout=20)
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg=="


@tool
def add(a: int, b: int) -> ToolOutput:
    """Add two numbers and draw the sum."""
    return ToolOutput(f"{a + b} [image 1 (image/png) attached]", [Image("image/png", PNG)])


def run(model) -> list[dict]:
    agent = Agent(model, tools=[add], store=None)
    assert agent("add them").stop_reason == "end_turn"
    (result,) = [r for m in agent.messages for r in m.tool_results]
    assert result.images == (Image("image/png", PNG),)
    return model


def bodies(fault, model) -> list[dict]:
    return [r["body"] for r in fault.app.state.recorder.for_model(model.model)]


def test_anthropic_gets_an_image_block_inside_the_tool_result(fault):
    model = claude_at(fault, "tools,text", retry=FAST)
    run(model)
    last = bodies(fault, model)[-1]["messages"][-1]
    assert last["role"] == "user"
    (result,) = last["content"]
    assert result["type"] == "tool_result"
    assert result["content"] == [
        {"type": "text", "text": "9 [image 1 (image/png) attached]"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
    ]


def test_bedrock_gets_the_image_bytes_in_the_tool_result_content(fault):
    model = bedrock_at(fault, "tools,text", retry=FAST)
    run(model)
    last = bodies(fault, model)[-1]["messages"][-1]
    (block,) = last["content"]
    assert block["toolResult"]["content"] == [
        {"text": "13 [image 1 (image/png) attached]"},
        {"image": {"format": "png", "source": {"bytes": PNG}}},  # boto3 sends bytes as base64
    ]
    assert block["toolResult"]["status"] == "success"


def test_openai_chat_gets_the_images_in_a_user_message_after_the_tool_messages(fault):
    model = openai_at(fault, "tools,text", retry=FAST)
    agent = Agent(model, tools=[add], store=None)
    assert agent("add them").stop_reason == "end_turn"
    messages = bodies(fault, model)[-1]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "user"]
    assert messages[2] == {
        "role": "tool",
        "tool_call_id": "call_a",
        "content": "3 [image 1 (image/png) attached]",
    }
    url = f"data:image/png;base64,{PNG}"
    assert messages[4]["content"] == [
        {"type": "text", "text": "The image returned by tool call call_a (add):"},
        {"type": "image_url", "image_url": {"url": url}},
        {"type": "text", "text": "The image returned by tool call call_b (add):"},
        {"type": "image_url", "image_url": {"url": url}},
    ]


def test_images_round_trip_through_the_message_dict():
    message = Message(
        "tool", [ToolResult("c1", "draw", "a dot", images=(Image("image/png", PNG),))]
    )
    data = message.to_dict()
    assert data["content"][0]["images"] == [{"media_type": "image/png", "data": PNG}]
    assert Message.from_dict(data) == message
    plain = Message("tool", [ToolResult("c1", "draw", "text only")]).to_dict()
    assert "images" not in plain["content"][0]  # journals without images are unchanged
    with pytest.raises(InputError, match="images must be a list of"):
        Message.from_dict({"role": "tool", "content": [{**plain["content"][0], "images": ["x"]}]})


def test_a_tool_output_refuses_images_the_providers_would_refuse():
    with pytest.raises(InputError, match="image media type 'image/svg\\+xml' is not one"):
        ToolOutput("x", [Image("image/svg+xml", base64.b64encode(b"<svg/>").decode())])
    with pytest.raises(InputError, match="image/png image's data is not valid base64"):
        ToolOutput("x", [Image("image/png", "not base64!")])
    with pytest.raises(InputError, match=r"must be tether\.messages\.Image objects, got dict"):
        ToolOutput("x", [{"media_type": "image/png", "data": PNG}])  # type: ignore[list-item]
