"""Context windows: per-model overrides, known family defaults, limits learned from errors."""

from __future__ import annotations

import functools
import re
from typing import Any

DEFAULT_WINDOW = 128_000
"""The window assumed for a model no rule knows."""

_FAMILIES: list[tuple[re.Pattern[str], int]] = [
    # OpenAI
    (re.compile(r"gpt-4\.1"), 1_047_576),
    (re.compile(r"gpt-5"), 400_000),
    (re.compile(r"\bo[134](-mini|-pro)?\b"), 200_000),
    (re.compile(r"gpt-4o|gpt-4-turbo|gpt-4-1106|gpt-4-0125"), 128_000),
    (re.compile(r"gpt-4-32k"), 32_768),
    (re.compile(r"gpt-4(-0613|-0314)?$"), 8_192),
    (re.compile(r"gpt-3\.5-turbo"), 16_385),
    # Anthropic, direct or on Bedrock (anthropic.claude-..., us.anthropic.claude-...)
    (re.compile(r"claude-(instant|2\.0)"), 100_000),
    (re.compile(r"claude"), 200_000),
    # Bedrock's own and hosted families
    (re.compile(r"amazon\.nova-(pro|lite|premier)"), 300_000),
    (re.compile(r"amazon\.nova-micro"), 128_000),
    (re.compile(r"amazon\.titan-text"), 8_192),
    (re.compile(r"meta\.llama3-[1-3]|meta\.llama4"), 128_000),
    (re.compile(r"meta\.llama3"), 8_192),
    (re.compile(r"mistral\.mistral-large"), 128_000),
    (re.compile(r"cohere\.command-r"), 128_000),
    # Gemini (gemini-1.5-pro has 2M; every other 1.5, 2.x and 3 model 1M)
    (re.compile(r"gemini-1\.5-pro"), 2_097_152),
    (re.compile(r"gemini-(1\.5|2|3)"), 1_048_576),
]

_LIMIT_PATTERNS: list[re.Pattern[str]] = [
    re.compile(r"maximum context length is (\d[\d,]*)", re.I),
    re.compile(r"tokens? > (\d[\d,]*) maximum", re.I),
    re.compile(r"context (?:window|length|limit) (?:of|is) (\d[\d,]*)", re.I),
    re.compile(r"max(?:imum)? (?:input |prompt )?tokens?(?: is| of|:)? (\d[\d,]*)", re.I),
    re.compile(r"limit of (\d[\d,]*) tokens", re.I),
    re.compile(r"maximum number of tokens allowed \((\d[\d,]*)\)", re.I),  # Gemini
]

_LEARNED: dict[str, int] = {}
"""Windows stated by providers' overflow errors, by model name (for this process)."""


@functools.lru_cache(maxsize=256)
def family_window(name: str) -> int | None:
    """The known window of a model name (``openai:gpt-4o``, ``anthropic.claude-...``)."""
    bare = name.split(":", 1)[-1].lower()
    for pattern, window in _FAMILIES:
        if pattern.search(bare):
            return window
    return None


def context_window(model: Any) -> int:
    """The context window of ``model``: its ``context_window`` attribute when set, else a
    limit learned from an overflow error, else (a FallbackChain) the smallest of its
    models', else its family's default, else DEFAULT_WINDOW. Remembered per model object
    until a limit is learned or its ``context_window`` changes."""
    known = _WINDOWS.get(id(model))
    explicit = getattr(model, "context_window", None)
    if known is not None and known[0] is model and known[1] == explicit:
        return known[2]
    window = _window(model)
    if len(_WINDOWS) >= 256:
        _WINDOWS.clear()
    _WINDOWS[id(model)] = (model, explicit, window)  # the reference keeps the id unique
    return window


_WINDOWS: dict[int, tuple[Any, Any, int]] = {}


def _window(model: Any) -> int:
    explicit = getattr(model, "context_window", None)
    if isinstance(explicit, int) and not isinstance(explicit, bool) and explicit > 0:
        return explicit
    name = str(getattr(model, "name", ""))
    learned = _LEARNED.get(name)
    if learned is not None:
        return learned
    members = getattr(model, "models", None)  # a FallbackChain: the smallest member fits all
    if isinstance(members, list) and members:
        return min(context_window(m) for m in members)
    return family_window(name) or DEFAULT_WINDOW


def stated_limit(text: str) -> int | None:
    """The token limit an overflow error states (``maximum context length is 8192``)."""
    for pattern in _LIMIT_PATTERNS:
        found = pattern.search(text)
        if found:
            value = int(found.group(1).replace(",", ""))
            if value >= 256:
                return value
    return None


def learn(model: Any, text: str) -> int | None:
    """Remember the limit an overflow error of ``model`` states; returns it (or None)."""
    limit = stated_limit(text)
    if limit is not None:
        _LEARNED[str(getattr(model, "name", ""))] = limit
        _WINDOWS.clear()  # a FallbackChain holding this model must see it too
    return limit
