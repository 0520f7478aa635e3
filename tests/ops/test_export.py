"""to_openai_messages: tether messages as an OpenAI-style trajectory."""

import json

from tether import Agent, tool
from tether.durable import MemoryStore
from tether.messages import Message, ReasoningBlock, TextBlock, ToolCall, ToolResult
from tether.models import ScriptedModel
from tether.ops.export import to_openai_messages
from tether.session import fold


def test_text_turns_and_a_system_prompt() -> None:
    messages = [Message("system", [TextBlock("be brief")]), Message.user("hi")]
    messages.append(Message.assistant("hello"))
    assert to_openai_messages(messages, system="outer") == [
        {"role": "system", "content": "outer"},
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
    ]


def test_tool_calls_carry_json_string_arguments_and_results_split_per_call() -> None:
    call_a = ToolCall("c1", "search", {"q": "café", "opts": {"n": [1, 2]}})
    call_b = ToolCall("c2", "noop", {})
    messages = [
        Message("assistant", [TextBlock("let me look"), call_a, call_b]),
        Message(
            "tool",
            [
                ToolResult("c1", "search", "found"),
                ToolResult("c2", "noop", "Error: broke", is_error=True, status="error"),
            ],
        ),
    ]
    out = to_openai_messages(messages)
    assert out == [
        {
            "role": "assistant",
            "content": "let me look",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "search", "arguments": json.dumps(call_a.arguments)},
                },
                {"id": "c2", "type": "function", "function": {"name": "noop", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "found"},
        {"role": "tool", "tool_call_id": "c2", "content": "Error: broke"},
    ]
    assert json.loads(out[0]["tool_calls"][0]["function"]["arguments"]) == call_a.arguments


def test_reasoning_is_omitted_unless_asked_and_redacted_reasoning_never_exported() -> None:
    message = Message(
        "assistant",
        [
            ReasoningBlock("step one"),
            ReasoningBlock("", signature="opaque", redacted=True),
            ReasoningBlock("step two"),
            ToolCall("c1", "f", {"x": 1}),
        ],
    )
    [plain] = to_openai_messages([message])
    assert plain["content"] is None
    assert "reasoning" not in plain
    [rich] = to_openai_messages([message], include_reasoning=True)
    assert rich["reasoning"] == "step one\nstep two"
    assert "opaque" not in json.dumps(rich)
    [only_redacted] = to_openai_messages(
        [Message("assistant", [ReasoningBlock("", "sig", True), TextBlock("hi")])],
        include_reasoning=True,
    )
    assert only_redacted == {"role": "assistant", "content": "hi"}


def test_an_empty_assistant_turn_has_empty_string_content() -> None:
    assert to_openai_messages([Message("assistant", [])]) == [{"role": "assistant", "content": ""}]


async def test_a_real_session_converts_in_order() -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    store = MemoryStore()
    model = ScriptedModel([{"tool_calls": [{"name": "add", "args": {"a": 1, "b": 2}}]}, "three"])
    agent = Agent(model=model, tools=[add], store=store, session_id="s")
    await agent.invoke_async("add")
    record = await store.load("s")
    assert record is not None
    assert to_openai_messages(fold(record).messages) == [
        {"role": "user", "content": "add"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1_0",
                    "type": "function",
                    "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1_0", "content": "3"},
        {"role": "assistant", "content": "three"},
    ]
