"""Pure logic of the provider layer (no server): classifier order, backoff, think tags, lenient parser."""

from __future__ import annotations

import pytest

from tether.events import ReasoningDelta, TextDelta
from tether.models.failover import ErrorInfo, FailoverReason, classify, parse_retry_after
from tether.models.lenient import extract_tool_calls
from tether.models.retry import RetryPolicy
from tether.models.thinking import ThinkTagFilter

R = FailoverReason


@pytest.mark.parametrize(
    ("info", "reason"),
    [
        (
            ErrorInfo("openai", 429, "insufficient_quota", "quota"),
            R.BILLING,
        ),  # provider code beats status
        (ErrorInfo("openai", 400, "context_length_exceeded", "too long"), R.CONTEXT_OVERFLOW),
        (
            ErrorInfo("anthropic", 400, "invalid_request_error", "prompt is too long: 1 > 0"),
            R.CONTEXT_OVERFLOW,
        ),
        (
            ErrorInfo(
                "anthropic", 400, "invalid_request_error", "Invalid `signature` in `thinking` block"
            ),
            R.THINKING_SIGNATURE,
        ),
        (
            ErrorInfo(
                "anthropic",
                429,
                "rate_limit_error",
                "Extra usage is required for long context requests.",
            ),
            R.LONG_CONTEXT_TIER,
        ),
        (ErrorInfo("x", 402, "", "Payment required: insufficient credits"), R.BILLING),
        (
            ErrorInfo("x", 402, "", "Daily limit hit; it resets at 00:00, try again later"),
            R.RATE_LIMIT,
        ),
        (ErrorInfo("x", 401), R.AUTH),
        (ErrorInfo("x", 403), R.AUTH_PERMANENT),
        (ErrorInfo("x", 413), R.PAYLOAD_TOO_LARGE),
        (ErrorInfo("x", 503), R.OVERLOADED),
        (ErrorInfo("x", 529), R.OVERLOADED),
        (ErrorInfo("x", 504), R.TIMEOUT),
        (ErrorInfo("x", 500), R.SERVER_ERROR),
        (ErrorInfo("x", 422, "weird_thing", "the model gpt-x does not exist"), R.MODEL_NOT_FOUND),
        (ErrorInfo("x", 400, "", "maximum context length exceeded"), R.CONTEXT_OVERFLOW),
        (ErrorInfo("x", 400, "", "bad field"), R.FORMAT_ERROR),
        (ErrorInfo("x", 404, "", "no route"), R.MODEL_NOT_FOUND),
        (ErrorInfo("x", None, "", "", transport="timeout"), R.TIMEOUT),
        (ErrorInfo("x", None, "", "", transport="connection"), R.SERVER_ERROR),
        (ErrorInfo("x", transport="disconnected", request_chars=10), R.SERVER_ERROR),
        (ErrorInfo("x", transport="disconnected", request_chars=500_000), R.CONTEXT_OVERFLOW),
        (
            ErrorInfo(
                "bedrock", 400, "ValidationException", "Input is too long for requested model."
            ),
            R.CONTEXT_OVERFLOW,
        ),
        (ErrorInfo("bedrock", None, "ModelStreamErrorException", "boom"), R.SERVER_ERROR),
        (ErrorInfo("x"), R.UNKNOWN),
    ],
)
def test_classifier_priority_order(info, reason):
    assert classify(info) is reason


def test_backoff_formula_with_cap_and_jitter():
    policy = RetryPolicy(base_delay=1.0, max_delay=5.0)
    assert [policy.backoff(n, lambda lo, hi: 0.0) for n in (1, 2, 3, 4)] == [1.0, 2.0, 4.0, 5.0]
    assert policy.backoff(2, lambda lo, hi: hi) == 3.0  # delay + uniform(0, 0.5 * delay)
    assert policy.backoff(9, lambda lo, hi: hi) == 7.5


def test_retry_after_values():
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after("0.5") == 0.5
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a date in the past
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None


def test_retry_policy_rejects_bad_values():
    with pytest.raises(ValueError, match="max_attempts must be >= 1"):
        RetryPolicy(max_attempts=0)
    with pytest.raises(ValueError, match="stale_timeout must be > 0"):
        RetryPolicy(stale_timeout=0)


def _split(chunks):
    f = ThinkTagFilter()
    events = [e for c in chunks for e in f.feed(c)] + f.flush()
    text = "".join(e.text for e in events if type(e) is TextDelta)
    reasoning = "".join(e.text for e in events if type(e) is ReasoningDelta)
    return text, reasoning


@pytest.mark.parametrize(
    "chunks",
    [
        ["<think>plan</think>Hi"],
        ["<", "think>pl", "an</", "think", ">Hi"],
        ["<thinking>plan</thinking>", "Hi"],
        ["<reason", "ing>plan</reasoning>H", "i"],
    ],
)
def test_think_tags_split_anywhere_never_leak(chunks):
    assert _split(chunks) == ("Hi", "plan")


def test_lone_angle_brackets_pass_through():
    assert _split(["a < b and x<y", " <", "b>bold</b> <thin"]) == (
        "a < b and x<y <b>bold</b> <thin",
        "",
    )


def test_unclosed_think_block_stays_reasoning():
    assert _split(["Hi <think>never closed</thi"]) == ("Hi ", "never closed</thi")


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>{"name": "add", "arguments": {"a": 1}}</tool_call>',
        '```json\n{"name": "add", "parameters": {"a": 1}}\n```',
        '{"name": "add", "arguments": "{\\"a\\": 1}"}',
        '[{"function": {"name": "add", "arguments": {"a": 1}}}]',
    ],
)
def test_lenient_parser_formats(text):
    assert extract_tool_calls(text, {"add"}) == ("", [("add", {"a": 1})])


def test_lenient_parser_leaves_ordinary_json_and_unknown_tools_alone():
    assert extract_tool_calls('{"answer": 42}', {"add"}) == ('{"answer": 42}', [])
    assert extract_tool_calls('{"name": "rm", "arguments": {}}', {"add"})[1] == []
    text, calls = extract_tool_calls(
        'Let me add.\n<tool_call>{"name": "add", "arguments": {}}</tool_call>', {"add"}
    )
    assert (text, calls) == ("Let me add.", [("add", {})])
