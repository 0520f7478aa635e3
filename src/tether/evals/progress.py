"""The progress bar of ``dataset.evaluate(progress=...)``: runs done of all, passed and
errors so far, on stderr (or the rich Console given), never in a report or its JSON.

It shows counts only: nothing a model, a tool or a dataset wrote reaches the terminal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tether.errors import ConfigurationError

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID


class Bar:
    """A rich progress bar over ``total`` runs."""

    def __init__(self, console: Any, run_id: str, total: int) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self.passed = 0
        self.errors = 0
        self.progress: Progress = Progress(
            TextColumn(f"eval {run_id}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[counts]}"), TimeElapsedColumn(),
            console=console, transient=False,
        )  # fmt: skip
        self.task: TaskID = self.progress.add_task("eval", total=total, counts=self._counts())
        self.progress.start()

    def _counts(self) -> str:
        return f"{self.passed} passed, {self.errors} errors"

    def done(self, *, passed: bool, error: bool) -> None:
        """One more run finished."""
        self.passed += passed
        self.errors += error
        self.progress.update(self.task, advance=1, counts=self._counts())

    def stop(self) -> None:
        self.progress.stop()


def progress_bar(progress: Any, run_id: str, total: int) -> Bar | None:
    """None for ``progress=False``; a bar on stderr for True, or on the rich Console given."""
    if progress is False or progress is None:
        return None
    from rich.console import Console

    if progress is True:
        return Bar(Console(stderr=True), run_id, total)
    if isinstance(progress, Console):
        return Bar(progress, run_id, total)
    raise ConfigurationError(
        f"dataset.evaluate(progress=...) takes a bool or a rich Console, got {progress!r:.80}"
    )
