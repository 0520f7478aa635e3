"""Parallel: the steps run concurrently on the same input; their outputs are joined."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from tether.errors import ConfigurationError
from tether.workflows.conductor import Call, Progress
from tether.workflows.workflow import Workflow

Join = Callable[[list[str]], str]


def json_list(outputs: list[str]) -> str:
    """The default join: the outputs as a JSON list of strings, in the steps' order."""
    return json.dumps(outputs, ensure_ascii=False)


class Parallel(Workflow):
    """``Parallel(a, b, join=...)``: every step on the input at once (one batch of node
    calls); ``join`` turns their outputs (in the steps' order) into the answer."""

    kind = "parallel"

    def __init__(
        self, *steps: Any, join: Join = json_list, name: str | None = None, **options: Any
    ) -> None:
        if not callable(join):
            raise ConfigurationError(
                f"Parallel(join=...) takes a function of the list of outputs, got "
                f"{type(join).__name__}"
            )
        self._join = join
        super().__init__(steps, name=name, **options)

    def plan(self, progress: Progress) -> list[Call] | str:
        if not progress.steps:
            return [Call(name, progress.task) for name in self.node_names]
        by_node = {out.name: out.output for out in progress.steps[0]}
        return self._join([by_node[name] for name in self.node_names])
