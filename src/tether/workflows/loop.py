"""Loop: one step again and again on its own output, until a test holds; always bounded."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tether.errors import ConfigurationError
from tether.workflows.conductor import Call, Progress
from tether.workflows.workflow import Workflow


class Loop(Workflow):
    """``Loop(step, until=lambda out: ..., max_rounds=N)``: round 1 on the prompt, each
    next round on the previous output; it ends when ``until(output)`` is true or after
    ``max_rounds`` rounds, with the last output as its answer."""

    kind = "loop"

    def __init__(
        self,
        step: Any,
        *,
        until: Callable[[str], bool] | None = None,
        max_rounds: int,
        name: str | None = None,
        **options: Any,
    ) -> None:
        if isinstance(max_rounds, bool) or not isinstance(max_rounds, int) or max_rounds < 1:
            raise ConfigurationError(f"Loop(max_rounds=...) takes an int >= 1, got {max_rounds!r}")
        if until is not None and not callable(until):
            raise ConfigurationError(
                f"Loop(until=...) takes a function of the round's output, got "
                f"{type(until).__name__}"
            )
        self._until = until
        self.max_rounds = max_rounds
        super().__init__([step], name=name, **options)

    def plan(self, progress: Progress) -> list[Call] | str:
        rounds = len(progress.steps)
        if rounds and (
            rounds >= self.max_rounds or (self._until is not None and self._until(progress.last))
        ):
            return progress.last
        return [Call(self.node_names[0], progress.last)]
