"""The README's A2A client snippet runs as printed against a live tether serve."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest
from a2a_serve import Served

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_a2a_client_runs_against_tether_serve(
    server: Served, monkeypatch: pytest.MonkeyPatch
):
    section = README.read_text().split("## Over A2A and AG-UI", 1)[1].split("\n## ", 1)[0]
    [source] = re.findall(r"```py\n(.*?)```", section, re.S)
    assert 'main("http://127.0.0.1:8700"' in source  # the default port of tether serve
    monkeypatch.setenv("TETHER_TOKEN", server.tokens["caller"])
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(source.replace("http://127.0.0.1:8700", server.url), str(README), "exec"), {})
    task_id, state, reply = printed.getvalue().split(" ", 2)
    assert task_id.startswith("a2a-")
    assert state == "TASK_STATE_COMPLETED"
    assert reply.strip() == "hi: hello"
