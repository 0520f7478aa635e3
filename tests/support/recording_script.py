"""A ScriptedModel callable script that records (deep copies of) what each model call was sent."""

from __future__ import annotations

import copy
from typing import Any

from tether.messages import Message


class Script:
    """Plays ``turns`` in order (then ``default``); a turn that is an exception is raised."""

    def __init__(self, *turns: Any, default: Any = None) -> None:
        self.turns = list(turns)
        self.default = default
        self.seen: list[list[Message]] = []
        self.specs: list[list[dict[str, Any]]] = []

    def __call__(self, messages: list[Message], specs: list[dict[str, Any]]) -> Any:
        self.seen.append(copy.deepcopy(messages))
        self.specs.append(copy.deepcopy(specs))
        index = len(self.seen) - 1
        turn = self.turns[index] if index < len(self.turns) else self.default
        if turn is None:
            raise AssertionError(f"the model was called {index + 1} times; the script has no turn")
        if isinstance(turn, BaseException):
            raise turn
        return turn

    @property
    def calls(self) -> int:
        return len(self.seen)
