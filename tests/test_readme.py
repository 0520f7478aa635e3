"""The README's runnable Python snippets run as printed (placeholders with `...` are skipped)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
RUNNABLE = [b for b in BLOCKS if "..." not in b and "gpt-" not in b and "claude" not in b]


def test_the_readme_has_runnable_snippets() -> None:
    assert RUNNABLE


@pytest.mark.parametrize("source", RUNNABLE, ids=[f"block{i}" for i in range(len(RUNNABLE))])
def test_a_readme_snippet_runs(
    source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # a snippet may create ./tether.db
    exec(compile(source, str(README), "exec"), {"__name__": "readme"})
