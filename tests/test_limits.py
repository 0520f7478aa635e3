"""Limits.exceeded: which limit stops a run first, and the explanation it gives."""

from __future__ import annotations

from tether import Limits, RunUsage


def usage(**counts: int) -> RunUsage:
    u = RunUsage()
    for name, value in counts.items():
        setattr(u, name, value)
    return u


def test_no_limit_reached() -> None:
    assert Limits().exceeded(usage(model_calls=100), 1e6) is None
    assert Limits(turns=3).exceeded(usage(model_calls=2), 0.0) is None


def test_each_limit_names_its_stop_reason_and_numbers() -> None:
    assert Limits(turns=2).exceeded(usage(model_calls=2), 0) == (
        "limit_turns",
        "reached the limit of 2 model call(s)",
    )
    assert Limits(total_tokens=10).exceeded(usage(input_tokens=6, output_tokens=5), 0) == (
        "limit_total_tokens",
        "used 11 tokens; the limit is 10",
    )
    assert Limits(output_tokens=4).exceeded(usage(output_tokens=4), 0) == (
        "limit_output_tokens",
        "used 4 output tokens; the limit is 4",
    )
    assert Limits(wall_seconds=1.5).exceeded(usage(), 2.04) == (
        "limit_wall_time",
        "ran 2.0 s; the limit is 1.5 s",
    )
    assert Limits(tool_calls=3).exceeded(usage(tool_calls=5), 0) == (
        "limit_tool_calls",
        "ran 5 tool call(s); the limit is 3",
    )


def test_the_first_limit_in_order_wins() -> None:
    both = Limits(turns=1, tool_calls=1)
    hit = both.exceeded(usage(model_calls=1, tool_calls=1), 0)
    assert hit is not None
    assert hit[0] == "limit_turns"
