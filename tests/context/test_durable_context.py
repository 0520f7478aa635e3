"""Compactions are journaled: SIGKILL, resume in another process, same view, nothing lost."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tether.context.compaction import SUMMARY_MARK, Compaction
from tether.durable import SQLiteStore
from tether.messages import Message
from tether.session import fold

CHILD = Path(__file__).parents[1] / "support" / "context_child.py"
SRC = str(Path(__file__).parents[2] / "src")


def _child(db: Path, views: Path, mode: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SRC}
    return subprocess.run(
        [sys.executable, str(CHILD), str(db), str(views), mode],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )


def _views(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _load(db: Path) -> Any:
    async def load() -> Any:
        store = SQLiteStore(db)
        try:
            return await store.load("long-1")
        finally:
            await store.close()

    return asyncio.run(load())


def test_compress_sigkill_resume_elsewhere_sees_the_same_view(tmp_path: Path) -> None:
    db, views = tmp_path / "s.db", tmp_path / "views.jsonl"
    killed = _child(db, views, "run")
    assert killed.returncode == -9, killed.stderr
    record = _load(db)
    kinds = [e.kind for e in record.entries]
    assert "compaction" in kinds
    assert "system_prompt" in kinds
    view = fold(record)
    assert view.compaction is not None
    # the journal keeps the whole transcript: 120 lookups' results, none summarised away
    results = [r for m in view.messages for r in m.tool_results]
    assert len(results) == 120
    assert view.messages[0].text == "look up the records"
    before = len(_views(views))

    resumed = _child(db, views, "resume")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout) == {
        "stop_reason": "end_turn",
        "text": "done after 200 lookups",
    }
    after = _views(views)[before:]
    first = after[0]
    assert first["summaries"] == 0  # the view was rebuilt from the journal, not re-summarised
    sent = [Message.from_dict(m) for m in first["messages"]]
    expected = view.compaction.view(view.messages)
    # the resumed call sees the journaled view plus the re-run lookup's result
    assert sent[: len(expected)] == expected
    summary = sent[1]
    assert summary.text.startswith(SUMMARY_MARK)
    assert summary == view.compaction.summary
    final = fold(_load(db))
    assert sum(len(m.tool_results) for m in final.messages) == 200
    assert isinstance(final.compaction, Compaction)


def test_a_crash_during_the_summarising_call_loses_nothing(tmp_path: Path) -> None:
    db, views = tmp_path / "s.db", tmp_path / "views.jsonl"
    killed = _child(db, views, "crash_summary")
    assert killed.returncode == -9, killed.stderr
    record = _load(db)
    assert "compaction" not in [e.kind for e in record.entries]
    view = fold(record)
    saved = len(view.messages)
    assert saved > 10
    assert view.status == "running"
    resumed = _child(db, views, "resume")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["stop_reason"] == "end_turn"
    final = fold(_load(db))
    assert final.messages[:saved] == view.messages  # nothing lost, nothing rewritten
    assert final.compaction is not None
