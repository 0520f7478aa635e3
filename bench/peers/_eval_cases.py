"""The 200 scripted cases both eval runners score: ``search topicN`` makes the agent call
``search`` once and answer ``done: results for topicN (at most 5)``; the case expects
``topicN`` in the answer. No tether or peer import here: both venvs read it."""

from __future__ import annotations

CASES = 200
CONCURRENCY = 8


def cases(n: int = CASES) -> list[tuple[str, str, str]]:
    """(name, input, expected text in the answer) per case."""
    return [(f"case-{i:03d}", f"search topic{i}", f"topic{i}") for i in range(n)]


def search_result(query: str, limit: int = 5) -> str:
    return f"results for {query} (at most {limit})"
