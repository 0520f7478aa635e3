from tether.events import ModelStop, ReasoningDelta, TextDelta, ToolCallDelta
from tether.messages import ReasoningBlock, TextBlock, ToolCall, Usage
from tether.models.assembler import ResponseAssembler


def assemble(*events):
    assembler = ResponseAssembler()
    for event in events:
        assembler.add(event)
    return assembler.finish()


def test_interleaved_tool_call_fragments_are_joined_per_index():
    response = assemble(
        ToolCallDelta(0, id="a", name="read"),
        ToolCallDelta(1, id="b", name="write"),
        ToolCallDelta(0, arguments='{"path": '),
        ToolCallDelta(1, arguments='{"path": "y", '),
        ToolCallDelta(0, arguments='"x"}'),
        ToolCallDelta(1, arguments='"text": "hi"}'),
        ModelStop("end_turn", Usage(3, 4)),
    )
    assert response.tool_calls == [
        ToolCall("a", "read", {"path": "x"}),
        ToolCall("b", "write", {"path": "y", "text": "hi"}),
    ]
    assert response.stop_reason == "tool_use"  # a response with calls is a tool-use stop
    assert response.usage == Usage(3, 4)
    assert response.message.usage == Usage(3, 4)


def test_text_and_reasoning_blocks():
    response = assemble(
        ReasoningDelta("think "),
        ReasoningDelta("more", signature="sig"),
        TextDelta("Hello "),
        TextDelta("world \ud800"),
        ModelStop("end_turn"),
    )
    assert response.message.content == [
        ReasoningBlock("think more", signature="sig"),
        TextBlock("Hello world \ufffd"),
    ]
    assert response.message.text == "Hello world \ufffd"


def test_invalid_arguments_are_reported_per_call():
    response = assemble(
        ToolCallDelta(0, id="a", name="f", arguments="{oops"),
        ToolCallDelta(1, id="b", name="g", arguments="[1, 2]"),
        ToolCallDelta(2, id="c", name="h", arguments=""),
        ModelStop("tool_use"),
    )
    assert set(response.argument_errors) == {"a", "b"}
    assert "not valid JSON" in response.argument_errors["a"]
    assert "must be a JSON object, got list" in response.argument_errors["b"]
    assert response.tool_calls[2].arguments == {}


def test_parsed_dict_arguments_and_missing_ids():
    response = assemble(ToolCallDelta(0, name="f", arguments={"k": "v"}), ModelStop("tool_use"))
    assert response.tool_calls == [ToolCall("call_0", "f", {"k": "v"})]


def test_pending_description_names_incomplete_calls():
    assembler = ResponseAssembler()
    assembler.add(ToolCallDelta(0, id="a", name="deploy", arguments='{"x"'))
    assert "'deploy'" in assembler.pending_description()
