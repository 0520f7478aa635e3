"""What a model call cost in USD, from the ``genai-prices`` package (``tether[prices]``).

The package ships its price data; nothing is downloaded. It is imported on the first
lookup (about half a second, in a worker thread: :func:`look_up`), never by ``import
tether``. Each (provider, model) pair is looked up once and cached: a model the package
does not know, or a run without the package, costs None (one warning per model name,
one for the missing package), never 0.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

from tether.messages import Usage

log = logging.getLogger("tether.pricing")

PROVIDER_IDS = {
    "openai": "openai",
    "openai-responses": "openai",
    "anthropic": "anthropic",
    "bedrock": "aws",
    "gemini": "google",
}
"""tether's provider names to genai-prices' provider ids (others are looked up as named)."""


@dataclass(frozen=True, slots=True)
class Prices:
    """One model's USD prices per million tokens (None where the package has none)."""

    provider: str
    model: str
    input: Decimal | None
    output: Decimal | None
    cache_read: Decimal | None
    cache_write: Decimal | None
    since: date | None
    """The date these prices took effect (None: the package gives no date)."""
    source: str
    """Where they come from, e.g. ``genai-prices 0.2.3``."""


_lock = threading.Lock()
_found: dict[tuple[str, str], tuple[Any, Any] | None] = {}
_missing_package_said = False


def _module() -> Any:
    global _missing_package_said
    try:
        import genai_prices
    except ImportError:
        if not _missing_package_said:
            _missing_package_said = True
            log.warning(
                "cost is unknown: the genai-prices package is not installed "
                "(pip install 'tether[prices]')"
            )
        return None
    return genai_prices


def looked_up(provider: str, model: str) -> bool:
    """Whether ``model``'s price (or its absence) is cached: :func:`cost_of` is then cheap."""
    return (provider, model) in _found


async def look_up(provider: str, model: str) -> None:
    """Cache ``model``'s price in a worker thread (the first import of genai-prices takes
    about half a second: not on the event loop)."""
    if (provider, model) not in _found:
        await asyncio.to_thread(_lookup, provider, model)


def _lookup(provider: str, model: str) -> tuple[Any, Any] | None:
    """genai-prices' (provider, model) for a tether model, cached; None if unknown."""
    key = (provider, model)
    try:
        return _found[key]
    except KeyError:
        pass
    with _lock:
        if key in _found:
            return _found[key]
        found: tuple[Any, Any] | None = None
        prices = _module()
        if prices is not None:
            from genai_prices import data_snapshot

            try:
                found = data_snapshot.get_snapshot().find_provider_model(
                    model, None, PROVIDER_IDS.get(provider, provider), None
                )
            except LookupError:
                log.warning(
                    "cost is unknown for %s model %r: genai-prices %s has no price for it",
                    provider,
                    model,
                    prices.__version__,
                )
        _found[key] = found
        return found


def prices_for(provider: str, model: str) -> Prices | None:
    """The prices of ``model`` at ``provider`` today, or None when unknown."""
    found = _lookup(provider, model)
    if found is None:
        return None
    import genai_prices

    info = found[1]
    now = datetime.now(UTC)
    price = info.get_prices(now)
    since = None
    if not hasattr(info.prices, "input_mtok"):  # conditional prices: the active one's start
        for conditional in reversed(info.prices):
            constraint = conditional.constraint
            if constraint is None or constraint.active(now):
                since = getattr(constraint, "start_date", None)
                break

    def base(value: Any) -> Decimal | None:
        price = getattr(value, "base", value)  # a tiered price: its base tier
        return None if price is None else Decimal(price)

    return Prices(
        provider,
        model,
        base(price.input_mtok),
        base(price.output_mtok),
        base(price.cache_read_mtok),
        base(price.cache_write_mtok),
        since,
        f"genai-prices {genai_prices.__version__}",
    )


def cost_of(
    provider: str, model: str, usage: Usage, cached_in_input: bool = False
) -> Decimal | None:
    """USD of one call's ``usage`` (cache tokens at the cache prices), None when unknown.

    ``cached_in_input``: the provider's ``input_tokens`` include the cache reads and
    writes (OpenAI, Gemini); Anthropic's and Bedrock's leave them out, genai-prices
    counts them in."""
    found = _lookup(provider, model)
    if found is None:
        return None
    from genai_prices import Usage as PriceUsage

    cached = usage.cache_read_tokens + usage.cache_write_tokens
    total_input = usage.input_tokens
    if not cached_in_input:
        total_input += cached
    elif total_input < cached:  # a server that reports fewer input tokens than cached
        total_input = cached
    counted = PriceUsage(
        input_tokens=total_input,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_tokens,
        cache_write_tokens=usage.cache_write_tokens,
    )
    provider_info, info = found
    try:
        price = info.calc_price(counted, provider_info)
    except (ValueError, LookupError) as exc:  # a price shape it cannot apply
        log.warning("cost is unknown for %s model %r: %s", provider, model, exc)
        return None
    return Decimal(price.total_price)


def _priced(model: Any) -> tuple[str, str] | None:
    """(provider, model name) the way the adapters price their calls: a FallbackChain by its
    first model; None for a model with no provider (nothing to look up)."""
    models = getattr(model, "models", None)
    if isinstance(models, list) and models:
        model = models[0]
    provider = getattr(model, "provider", None)
    name = getattr(model, "model", None)
    if not isinstance(name, str):
        name = getattr(model, "name", None)
    if not isinstance(provider, str) or not isinstance(name, str):
        return None
    return provider, name


async def input_cost(model: Any, tokens: int) -> Decimal | None:
    """USD of ``tokens`` input tokens at ``model``'s input price (None: not priced). The
    price is looked up off the event loop the first time (see :func:`look_up`)."""
    priced = _priced(model)
    if priced is None:
        return None
    if not looked_up(*priced):
        await look_up(*priced)
    prices = prices_for(*priced)
    if prices is None or prices.input is None:
        return None
    return Decimal(tokens) * prices.input / Decimal(1_000_000)
