"""Repair tool names the model got slightly wrong, when the intended tool is unambiguous."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS = re.compile(r"[\s._-]+")
_MCP_NAMESPACE = re.compile(r"^mcp__.+?__(?=.)")
# Compared on the normalized form, so "functions.", "function_" and "Functions-" all match.
_PREFIXES = ("functions_", "function_", "default_api_", "tools_", "tool_")
_SUFFIXES = ("_tool", "_function")


def repair_tool_name(name: str, available: Collection[str]) -> str | None:
    """The available tool ``name`` most likely means, or None if none or several fit.

    Rules, in order; the first rule that matches anything decides (one match: that
    name; several: None): exact; case-insensitive; same words ignoring case and
    separators (``readFile``, ``read-file``, ``READ_FILE``); same after removing a
    namespace prefix or suffix (``functions.``, ``default_api.``, ``mcp__server__``,
    ``_tool``); edit distance on the normalized form, at most 2 (1 for names of
    4 characters or fewer), with a unique best match.
    """
    if name in available:
        return name
    folded = name.casefold()
    normal = _normalize(name)
    core = _core(name)
    rules: tuple[Callable[[str], bool], ...] = (
        lambda tool: tool.casefold() == folded,
        lambda tool: _normalize(tool) == normal,
        # One side carries a namespace the other lacks...
        lambda tool: _normalize(tool) == core or _core(tool) == normal,
        # ...or both carry different ones.
        lambda tool: _core(tool) == core,
    )
    for rule in rules:
        matches = [tool for tool in available if rule(tool)]
        if matches:
            return matches[0] if len(matches) == 1 else None
    return _closest(normal, core, available)


def describe_available(name: str, available: Collection[str]) -> str:
    """Error text for the model: ``Unknown tool 'x'. Available tools: a, b, c.``"""
    if not available:
        return f"Unknown tool {name!r}. No tools are available."
    return f"Unknown tool {name!r}. Available tools: {', '.join(sorted(available))}."


def _normalize(name: str) -> str:
    name = _CAMEL_BOUNDARY.sub("_", name)
    return _SEPARATORS.sub("_", name).strip("_").casefold()


def _core(name: str) -> str:
    """The normalized name without a known namespace prefix or suffix."""
    core = _normalize(_MCP_NAMESPACE.sub("", name))
    stripped = True
    while stripped:
        stripped = False
        for prefix in _PREFIXES:
            if core.startswith(prefix) and len(core) > len(prefix):
                core = core[len(prefix) :]
                stripped = True
    for suffix in _SUFFIXES:
        if core.endswith(suffix) and len(core) > len(suffix):
            return core[: -len(suffix)]
    return core


def _closest(normal: str, core: str, available: Collection[str]) -> str | None:
    best: list[str] = []
    best_distance = 2 if len(normal) > 4 else 1
    for tool in available:
        cap = best_distance + 1  # a capped result can never tie with the best
        distance = min(
            _distance(normal, _normalize(tool), cap),
            _distance(core, _core(tool), cap),
        )
        if distance < best_distance or (distance == best_distance and not best):
            best, best_distance = [tool], distance
        elif distance == best_distance:
            best.append(tool)
    return best[0] if len(best) == 1 else None


def _distance(a: str, b: str, bound: int) -> int:
    """Damerau-Levenshtein (optimal string alignment) distance, capped at ``bound``."""
    if abs(len(a) - len(b)) >= bound:
        return bound
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cost = 0 if ca == cb else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                current[j] = min(current[j], previous2[j - 2] + 1)
        if min(current) >= bound:
            return bound
        previous2, previous = previous, current
    return min(previous[-1], bound)
