"""A provider adapter prices the usage it reports (tether.pricing): a model genai-prices
does not know, here the fault server's plan names, costs None and is warned about once."""

from __future__ import annotations

import itertools
import logging
from typing import Any

import pytest

from tether import Agent
from tether.models import OpenAIModel, RetryPolicy

FAST = RetryPolicy(max_attempts=2, base_delay=0.001, max_delay=0.005, stale_timeout=20)
_tags = itertools.count()


def test_an_openai_model_genai_prices_does_not_know_costs_none_once_warned(
    fault: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="tether.pricing")
    name = f"cached~cost-{next(_tags)}"
    for _ in range(3):
        model = OpenAIModel(name, api_key="sk-test", base_url=fault.url + "/v1", retry=FAST)
        result = Agent(model=model)("hi")
        assert result.usage.cache_read_tokens == 8  # the usage was reported
        assert result.usage.cost is None
    said = [r.getMessage() for r in caplog.records if r.name == "tether.pricing"]
    assert len(said) == 1
    assert said[0].startswith(f"cost is unknown for openai model {name!r}")
