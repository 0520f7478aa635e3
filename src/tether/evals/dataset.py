"""Dataset: cases and the evaluators that score every run of them."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from tether.errors import ConfigurationError
from tether.evals.case import Case
from tether.evals.score import Evaluator, as_evaluator

if TYPE_CHECKING:
    from tether.control.interrupts import Interrupt
    from tether.durable.store import Store
    from tether.evals.report import Report
    from tether.ops.app_loader import Factory


class Dataset:
    """``cases`` (names unique) and ``evaluators`` (Evaluators or functions of the run;
    names unique: give ``name=`` to a second evaluator of one type)."""

    def __init__(self, cases: Iterable[Case], evaluators: Iterable[Any] = ()) -> None:
        self.cases = list(cases)
        names: set[str] = set()
        for i, case in enumerate(self.cases):
            if not isinstance(case, Case):
                raise ConfigurationError(f"Dataset cases[{i}] is not a Case: {case!r:.80}")
            if case.name in names:
                raise ConfigurationError(f"Dataset: two cases are named {case.name!r}")
            names.add(case.name)
        self.evaluators: list[Evaluator] = [as_evaluator(e) for e in evaluators]
        seen: set[str] = set()
        for evaluator in self.evaluators:
            if evaluator.name in seen:
                raise ConfigurationError(
                    f"Dataset: two evaluators are named {evaluator.name!r}; give one a "
                    "name= of its own (Custom(fn, name=...) for a function)"
                )
            seen.add(evaluator.name)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> Dataset:
        """Load a ``.yaml`` / ``.yml`` or ``.jsonl`` dataset (see tether.evals.dataset_io)."""
        from tether.evals.dataset_io import load

        cases, evaluators = load(path)
        try:
            return cls(cases, evaluators)
        except ConfigurationError as exc:
            raise ConfigurationError(f"dataset file {str(path)!r}: {exc}") from None

    def to_file(self, path: str | os.PathLike[str]) -> None:
        """Save the cases and the built-in evaluators (custom ones are refused)."""
        from tether.evals.dataset_io import dump

        dump(self, path)

    async def evaluate_async(
        self,
        factory: Factory,
        *,
        concurrency: int = 8,
        repeat: int = 1,
        answers: Callable[[Interrupt], Any] | None = None,
        store: Store | None = None,
        output_type: Any = None,
        progress: Any = False,
    ) -> Report:
        """Run every case ``repeat`` times, ``concurrency`` at once, each on a fresh agent
        from ``factory``, and score the runs (see tether.evals.runner). ``progress=True``
        draws a progress bar on stderr (or on the rich Console given); off by default."""
        from tether.evals.runner import evaluate

        return await evaluate(
            self, factory, concurrency=concurrency, repeat=repeat, answers=answers,
            store=store, output_type=output_type, progress=progress,
        )  # fmt: skip

    def evaluate(
        self,
        factory: Factory,
        *,
        concurrency: int = 8,
        repeat: int = 1,
        answers: Callable[[Interrupt], Any] | None = None,
        store: Store | None = None,
        output_type: Any = None,
        progress: Any = False,
    ) -> Report:
        """Synchronous :meth:`evaluate_async`."""
        from tether.sync_run import run_sync

        return run_sync(
            self.evaluate_async(
                factory, concurrency=concurrency, repeat=repeat, answers=answers,
                store=store, output_type=output_type, progress=progress,
            )
        )  # fmt: skip
