"""The README's runnable Python snippets run as printed (placeholders with `...` are skipped).

A snippet whose first line is ``# NAME.py`` is a file the reader saves: every such file is
written into the directory each snippet runs in (and importable there), so a later
snippet can serve it (``--app NAME:factory``). The Python's own scripts directory is on
PATH, as it is in an activated virtualenv (the ``temporal`` CLI of the dev extra)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
RUNNABLE = [b for b in BLOCKS if "..." not in b and "gpt-" not in b and "claude" not in b]
FILE_LINE = re.compile(r"# ([A-Za-z_][A-Za-z0-9_]*\.py)\n")
FILES = {m.group(1): b for b in RUNNABLE if (m := FILE_LINE.match(b))}


def test_the_readme_has_runnable_snippets() -> None:
    assert RUNNABLE


@pytest.mark.parametrize("source", RUNNABLE, ids=[f"block{i}" for i in range(len(RUNNABLE))])
def test_a_readme_snippet_runs(
    source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # a snippet may create ./tether.db
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    scripts = str(Path(sys.executable).parent)
    monkeypatch.setenv("PATH", os.pathsep.join([scripts, os.environ.get("PATH", "")]))
    try:
        exec(compile(source, str(README), "exec"), {"__name__": "readme"})
    finally:
        for name in FILES:
            sys.modules.pop(name.removesuffix(".py"), None)
