"""Token estimates, calibration, and context windows per model."""

from __future__ import annotations

from tether.context import context_window, estimate_tokens, tiktoken_counter
from tether.context.estimate import Estimator, reported_prompt_tokens
from tether.context.window import DEFAULT_WINDOW, family_window, learn, stated_limit
from tether.messages import Message, ToolCall, ToolResult, Usage
from tether.models import AnthropicModel, OpenAIModel, ScriptedModel


def test_the_heuristic_counts_messages_tools_and_the_system_prompt() -> None:
    messages = [Message.user("a" * 400)]
    base = estimate_tokens(messages)
    assert 100 <= base <= 110
    spec = {"name": "lookup", "description": "d" * 400, "parameters": {}}
    assert estimate_tokens(messages, [spec]) >= base + 100
    assert estimate_tokens(messages, system_prompt="s" * 400) >= base + 100
    call = Message("assistant", [ToolCall("c", "lookup", {"q": "x" * 400})])
    result = Message("tool", [ToolResult("c", "lookup", "r" * 400)])
    assert estimate_tokens([call]) > 100
    assert estimate_tokens([result]) > 100


def test_an_exact_counter_is_used_when_given() -> None:
    words = estimate_tokens([Message.user("one two three")], count=lambda t: len(t.split()))
    assert words == 4 + 2 + 3  # message framing + block framing + three words
    # tiktoken is an optional extra; here it is either absent or offline -> None (heuristic)
    counter = tiktoken_counter()
    assert counter is None or counter("hello world") > 0


def test_calibration_starts_from_the_reported_count_plus_what_was_appended() -> None:
    transcript = [Message.user("a" * 400)]
    estimator = Estimator()
    estimator.full(transcript, 0, len(transcript))
    heuristic = estimator.tokens
    estimator.calibrate(2 * heuristic, len(transcript))  # the provider counts twice as many
    assert estimator.tokens == 2 * heuristic
    assert estimator.ratio == 2.0
    transcript.append(Message.assistant("b" * 400))
    assert estimator.update(transcript) == 2 * heuristic + 2 * (heuristic)


def test_reported_prompt_tokens_follow_each_providers_cache_accounting() -> None:
    usage = Usage(input_tokens=100, cache_read_tokens=50, cache_write_tokens=10)
    openai = OpenAIModel("gpt-4o", api_key="k")
    claude = AnthropicModel("claude-sonnet-4-5", api_key="k")
    assert reported_prompt_tokens(usage, openai) == 100  # cached tokens are inside
    assert reported_prompt_tokens(usage, claude) == 160


def test_windows_known_overridden_and_learned() -> None:
    assert family_window("openai:gpt-4o-mini") == 128_000
    assert family_window("openai:gpt-4.1") == 1_047_576
    assert family_window("anthropic:claude-sonnet-4-5") == 200_000
    assert family_window("bedrock:us.anthropic.claude-3-5-sonnet-20241022-v2:0") == 200_000
    assert family_window("bedrock:amazon.nova-pro-v1:0") == 300_000
    assert family_window("something-new") is None
    assert context_window(ScriptedModel(["x"], name="w-unknown")) == DEFAULT_WINDOW
    assert context_window(OpenAIModel("gpt-4o", api_key="k", context_window=9_000)) == 9_000
    model = ScriptedModel(["x"], name="w-learn")
    assert learn(model, "This model's maximum context length is 8192 tokens.") == 8192
    assert context_window(model) == 8192


def test_stated_limits_in_each_providers_words() -> None:
    assert stated_limit("maximum context length is 128,000 tokens") == 128_000
    assert stated_limit("prompt is too long: 210000 tokens > 200000 maximum") == 200_000
    assert stated_limit("Input is too long for requested model.") is None
    assert stated_limit("too many input tokens; max input tokens: 32768") == 32_768


def test_a_fallback_chain_uses_its_smallest_window() -> None:
    from tether.models import FallbackChain

    chain = FallbackChain(
        [
            OpenAIModel("gpt-4.1", api_key="k"),
            ScriptedModel(["x"], name="w-small", context_window=9_000),
        ]
    )
    assert context_window(chain) == 9_000


def test_a_deferred_count_takes_the_providers_count_or_a_full_count() -> None:
    """A lone prompt is not counted before its call (nothing could be compressed): the
    provider's reported count becomes the estimate, or, when none comes back, the next
    update counts the whole transcript instead of only what was appended."""
    transcript = [Message.user("a" * 400)]
    reported = Estimator()
    reported.defer(30)
    reported.calibrate(500, len(transcript))
    assert (reported.tokens, reported.counted, reported.fixed) == (500, 1, 30)
    transcript.append(Message.assistant("b" * 400))
    assert reported.update(transcript) == 500 + estimate_tokens(transcript[1:])

    silent = Estimator()
    silent.defer(30)
    silent.calibrate(0, len(transcript))  # no usage reported: still deferred
    assert silent.counted == -1
    full = Estimator()
    full.full(transcript, 30, len(transcript))
    assert silent.full(transcript, silent.fixed, len(transcript)) == full.tokens


def test_the_fixed_part_is_recounted_when_the_tool_list_changes_in_place() -> None:
    """An MCP tool refresh rebuilds an agent's spec list in place and forgets what was
    remembered for it: the next count follows the new specs."""
    from tether.context.estimate import forget_fixed

    specs: list[dict[str, object]] = [{"name": "a", "description": "x", "input_schema": {}}]
    before = Estimator().fixed_tokens_for(specs, None)
    specs[:] = [*specs, {"name": "b", "description": "y" * 4_000, "input_schema": {}}]
    assert Estimator().fixed_tokens_for(specs, None) == before  # same list: remembered
    forget_fixed(specs)
    after = Estimator().fixed_tokens_for(specs, None)
    assert after > before + 900
