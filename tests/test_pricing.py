"""What a run cost: genai-prices' price of each call's reported tokens, summed; None and
one warning for a model it does not know; ``Limits(cost=...)`` stops before the call."""

from __future__ import annotations

import itertools
import json
import logging
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import genai_prices
import pytest

from tether import Agent, Limits, tool
from tether.durable import SQLiteStore
from tether.errors import ConfigurationError
from tether.models import ScriptedModel
from tether.pricing import cost_of, prices_for

_names = itertools.count()


@tool
def look(q: str) -> str:
    """Look something up."""
    return f"found {q}"


def _turns(*usages: dict[str, int]) -> list[Any]:
    """One tool call per usage but the last, which answers."""
    turns: list[Any] = [
        {"tool_calls": [{"name": "look", "args": {"q": str(i)}}], "usage": u}
        for i, u in enumerate(usages[:-1])
    ]
    return [*turns, {"text": "done", "usage": usages[-1]}]


def _price(model: str, provider: str, **tokens: int) -> Decimal:
    price = genai_prices.calc_price(genai_prices.Usage(**tokens), model, provider_id=provider)
    return Decimal(price.total_price)


def test_a_runs_cost_is_the_sum_of_its_calls_genai_prices_cache_tokens_as_cache() -> None:
    calls = (
        {"input_tokens": 1200, "output_tokens": 40, "cache_read_tokens": 1000},
        {"input_tokens": 300, "output_tokens": 90, "cache_write_tokens": 2000},
        {"input_tokens": 50, "output_tokens": 500},
    )
    # scripted input tokens leave the cache out (as Anthropic reports them)
    model = ScriptedModel(_turns(*calls), provider="anthropic", name="claude-sonnet-4-5")
    agent = Agent(model=model, tools=[look])
    result = agent("go")
    expected = [
        _price("claude-sonnet-4-5", "anthropic", input_tokens=2200, output_tokens=40,
               cache_read_tokens=1000),
        _price("claude-sonnet-4-5", "anthropic", input_tokens=2300, output_tokens=90,
               cache_write_tokens=2000),
        _price("claude-sonnet-4-5", "anthropic", input_tokens=50, output_tokens=500),
    ]  # fmt: skip
    assert result.usage.cost == sum(expected)
    costs = [m.usage.cost for m in agent.messages if m.role == "assistant" and m.usage]
    assert costs == expected
    # cache reads are cheaper than input, cache writes dearer: both priced as cache
    plain = _price("claude-sonnet-4-5", "anthropic", input_tokens=2200, output_tokens=40)
    assert expected[0] < plain
    assert expected[1] > _price("claude-sonnet-4-5", "anthropic", input_tokens=2300,
                                output_tokens=90)  # fmt: skip


def test_openai_input_tokens_already_hold_the_cached_ones() -> None:
    usage = {"input_tokens": 1000, "output_tokens": 10, "cache_read_tokens": 800}
    model = ScriptedModel([{"text": "hi", "usage": usage}], provider="openai", name="gpt-4o")
    from tether.messages import Usage

    reported = Usage.from_dict(usage)
    assert cost_of("openai", "gpt-4o", reported, cached_in_input=True) == _price(
        "gpt-4o", "openai", input_tokens=1000, output_tokens=10, cache_read_tokens=800
    )
    assert Agent(model=model)("hi").usage.cost == _price(
        "gpt-4o", "openai", input_tokens=1800, output_tokens=10, cache_read_tokens=800
    )


def test_prices_name_input_output_cache_prices_and_their_source() -> None:
    prices = prices_for("anthropic", "claude-sonnet-4-5")
    assert prices is not None
    assert (prices.input, prices.output) == (Decimal("3"), Decimal("15"))
    assert (prices.cache_read, prices.cache_write) == (Decimal("0.3"), Decimal("3.75"))
    assert prices.source == f"genai-prices {genai_prices.__version__}"
    assert prices_for("openai", f"no-such-model-{next(_names)}") is None


def test_prices_say_the_date_they_took_effect_when_the_package_dates_them() -> None:
    from datetime import date

    dated = prices_for("anthropic", "claude-opus-4-6")  # repriced from 2026-03-13
    assert dated is not None
    assert dated.since == date(2026, 3, 13)
    assert prices_for("anthropic", "claude-sonnet-4-5").since is None  # type: ignore[union-attr]


def test_an_unknown_model_costs_none_with_one_warning_per_model_name(
    caplog: pytest.LogCaptureFixture,
) -> None:
    name = f"house-model-{next(_names)}"
    usage = {"input_tokens": 10, "output_tokens": 5}
    caplog.set_level(logging.WARNING, logger="tether.pricing")
    for _ in range(2):
        model = ScriptedModel(_turns(usage, usage, usage), provider="openai", name=name)
        result = Agent(model=model, tools=[look])("go")
        assert result.usage.model_calls == 3
        assert result.usage.cost is None  # unknown, never 0
        assert "cost" not in result.usage.to_dict()
    said = [r for r in caplog.records if name in r.getMessage()]
    assert [r.getMessage() for r in said] == [f"cost is unknown for openai model {name!r}: "
        f"genai-prices {genai_prices.__version__} has no price for it"]  # fmt: skip
    assert said[0].threadName != "MainThread"  # looked up off the event loop


def test_a_model_without_a_provider_costs_nothing_and_looks_nothing_up(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="tether.pricing")
    result = Agent(model=ScriptedModel(["hi"]))("hi")
    assert result.usage.cost is None
    assert not [r for r in caplog.records if r.name == "tether.pricing"]


def test_without_the_package_cost_is_none_and_it_is_said_once(tmp_path: Path) -> None:
    code = (
        "import sys, logging, json\n"
        "sys.modules['genai_prices'] = None  # as if not installed: its import fails\n"
        "logging.basicConfig(level=logging.WARNING, format='%(message)s')\n"
        "from tether import Agent\n"
        "from tether.models import ScriptedModel\n"
        "for name in ('gpt-4o', 'gpt-4o-mini'):\n"
        "    r = Agent(model=ScriptedModel(['a'], provider='openai', name=name))('x')\n"
        "    print(json.dumps(str(r.usage.cost)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ['"None"', '"None"']
    assert out.stderr.count("genai-prices package is not installed") == 1, out.stderr


def test_cost_limit_stops_before_the_call_that_would_pass_it() -> None:
    usage = {"input_tokens": 100_000, "output_tokens": 1000}
    one = _price("gpt-4o", "openai", input_tokens=100_000, output_tokens=1000)  # $0.26
    model = ScriptedModel(
        _turns(usage, usage, usage, usage), provider="openai", name="gpt-4o", record_requests=True
    )
    result = Agent(model=model, tools=[look], limits=Limits(cost=one * 2 + one / 2))("go")
    assert result.stop_reason == "cost_limit"
    assert model.calls == 2  # the third call would have passed $0.65: never made
    assert len(model.requests) == 2
    assert result.usage.cost == one * 2
    assert result.reason is not None
    assert "the limit of $0.65" in result.reason


def test_cost_limit_stops_a_first_call_whose_input_alone_passes_it() -> None:
    """The first call has no calls before it to estimate from: its input is estimated
    (context/estimate.py) at the model's input price, and the model is never called."""
    model = ScriptedModel(["never"], provider="openai", name="gpt-4o", record_requests=True)
    prompt = "summarise this: " + "lorem ipsum " * 40_000  # about 120k tokens: ~$0.30 of input
    result = Agent(model=model, limits=Limits(cost=Decimal("0.01")))(prompt)
    assert result.stop_reason == "cost_limit"
    assert model.calls == 0
    assert model.requests == []
    assert result.reason is not None
    assert "the first model call's input alone" in result.reason
    assert "past the limit of $0.01" in result.reason
    assert result.usage.cost is None  # nothing was spent


def test_an_unpriced_first_call_is_not_stopped_by_a_cost_limit() -> None:
    model = ScriptedModel(["fine"])  # no provider: nothing to price, nothing to estimate
    result = Agent(model=model, limits=Limits(cost=Decimal("0.01")))("x " * 50_000)
    assert result.stop_reason == "end_turn"


def test_cost_limit_lets_a_run_under_it_finish() -> None:
    usage = {"input_tokens": 1000, "output_tokens": 100}
    model = ScriptedModel(_turns(usage, usage), provider="openai", name="gpt-4o")
    result = Agent(model=model, tools=[look], limits=Limits(cost=Decimal("2.50")))("go")
    assert result.stop_reason == "end_turn"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (Decimal(0), "Limits(cost=...) must be a positive amount in USD, got Decimal('0')"),
        ("-1", "Limits(cost=...) must be a positive amount in USD, got '-1'"),
        ("lots", "Limits(cost=...) must be a positive amount in USD, got 'lots'"),
        (Decimal("NaN"), "Limits(cost=...) must be a positive amount in USD, got Decimal('NaN')"),
        (2.5, "Limits(cost=...) must be a Decimal in USD (Decimal('2.50')), got float 2.5"),
        (True, "Limits(cost=...) must be a Decimal in USD (Decimal('2.50')), got bool True"),
    ],
)
def test_a_bad_cost_limit_is_refused(value: Any, message: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        Limits(cost=value)
    assert str(info.value) == message


def test_a_cost_limit_reads_ints_and_decimal_strings() -> None:
    assert Limits(cost="2.50").cost == Decimal("2.50")  # type: ignore[arg-type]
    assert Limits(cost=3).cost == Decimal(3)  # type: ignore[arg-type]


def test_cost_survives_the_journal_and_a_resume(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    usage = {"input_tokens": 5000, "output_tokens": 200, "cache_read_tokens": 4000}
    turns = [*_turns(usage, usage), {"text": "again", "usage": usage}]

    def agent() -> Agent:
        model = ScriptedModel(turns, provider="openai", name="gpt-4o")
        return Agent(model=model, tools=[look], store=SQLiteStore(db), session_id="c1")

    first = agent()("go")
    assert _page(db)["c1"] == str(first.usage.cost)
    later = agent()  # a new process's agent: the conversation comes from the journal
    second = later("again")
    journaled = [m.usage for m in later.messages[:4] if m.role == "assistant"]
    assert [type(u.cost) for u in journaled if u] == [Decimal, Decimal]
    assert sum(u.cost for u in journaled if u and u.cost) == first.usage.cost
    assert first.usage.cost
    assert second.usage.cost
    assert _page(db)["c1"] == str(first.usage.cost + second.usage.cost)


def _page(db: str) -> dict[str, str | None]:
    import asyncio

    async def read() -> Any:
        store = SQLiteStore(db)
        try:
            return await store.session_page()
        finally:
            await store.close()

    page = asyncio.run(read())
    return {s.session_id: None if s.cost is None else str(s.cost) for s in page.sessions}


def test_a_sub_agent_trees_cost_is_by_agent_and_in_the_total() -> None:
    usage = {"input_tokens": 2000, "output_tokens": 300}
    child_model = ScriptedModel(_turns(usage, usage), provider="openai", name="gpt-4o-mini")
    child = Agent(model=child_model, tools=[look])
    call = {"id": "k1", "name": "helper", "args": {"task": "dig"}}
    parent_model = ScriptedModel(
        [{"tool_calls": [call], "usage": usage}, {"text": "ok", "usage": usage}],
        provider="openai",
        name="gpt-4o",
    )
    result = Agent(model=parent_model, tools=[child.as_tool("helper")])("go")
    mini = _price("gpt-4o-mini", "openai", input_tokens=2000, output_tokens=300)
    big = _price("gpt-4o", "openai", input_tokens=2000, output_tokens=300)
    assert result.usage.by_agent["helper#k1"].cost == 2 * mini
    assert result.usage.cost == 2 * mini + 2 * big
    assert json.loads(json.dumps(result.usage.to_dict()))["cost"] == str(2 * mini + 2 * big)


def test_a_fallback_chains_call_is_priced_as_the_model_that_answered() -> None:
    from tether.models import FallbackChain

    usage = {"input_tokens": 3000, "output_tokens": 100}
    primary = ScriptedModel(["x"], provider="openai", name="gpt-4o", overflow_at=1)
    backup = ScriptedModel([{"text": "ok", "usage": usage}], provider="openai", name="gpt-4o-mini")
    result = Agent(model=FallbackChain([primary, backup]))("a long enough prompt")
    assert result.usage.model_fallbacks == 1
    assert result.usage.cost == _price("gpt-4o-mini", "openai", input_tokens=3000,
                                       output_tokens=100)  # fmt: skip


def test_pricing_reads_the_shipped_data_without_the_network() -> None:
    code = (
        "import socket, threading\n"
        "def refuse(*a, **k):\n"
        "    raise OSError('no network in this test')\n"
        "socket.socket.connect = refuse\n"
        "socket.getaddrinfo = refuse\n"
        "socket.create_connection = refuse\n"
        "from tether.messages import Usage\n"
        "from tether.pricing import cost_of\n"
        "print(cost_of('openai', 'gpt-4o', Usage(1_000_000, 0), True), threading.active_count())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["2.50", "1"]  # $2.50 per million input tokens; no updater
