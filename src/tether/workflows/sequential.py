"""Sequential: each step gets the previous step's output."""

from __future__ import annotations

from typing import Any

from tether.workflows.conductor import Call, Progress
from tether.workflows.workflow import Workflow


class Sequential(Workflow):
    """``Sequential(a, b, c)``: a on the prompt, b on a's output, c on b's; c's is the answer."""

    kind = "sequential"

    def __init__(self, *steps: Any, name: str | None = None, **options: Any) -> None:
        super().__init__(steps, name=name, **options)

    def plan(self, progress: Progress) -> list[Call] | str:
        done = len(progress.steps)
        names = self.node_names
        if done >= len(names):
            return progress.last
        return [Call(names[done], progress.last)]
