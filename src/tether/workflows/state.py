"""A workflow's shared state: the fold of its initial value and every node's updates.

The state is never written in place: each function step (or nested workflow) returns
updates, journaled inside its node's result, and the state at any point is the initial
state with the updates of each step applied in order (the branches of one parallel step
merged first, by the declared reducers). So a resumed workflow, in any process, sees
exactly the state the first one saw, and an update is never lost between a node's result
and the state's own journal entry. The session state mirrors the fold (journaled as
deltas, ``tether.state_delta``) so ``wf.state`` and the session views show it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeAlias

from tether.errors import ConfigurationError, RunError

Reducer: TypeAlias = Callable[[Any, Any], Any]
"""Combines the value so far with an update's value: ``reducer(old, new) -> merged``."""


def last_write(old: Any, new: Any) -> Any:
    """The later update wins (branches of a parallel step: the later branch in step order)."""
    return new


def append(old: Any, new: Any) -> Any:
    """Lists concatenated (a single value is appended as one item)."""
    head = list(old) if isinstance(old, list | tuple) else [old]
    tail = list(new) if isinstance(new, list | tuple) else [new]
    return head + tail


def merge_dict(old: Any, new: Any) -> Any:
    """Dicts merged key by key (the update's keys win)."""
    if not isinstance(old, Mapping) or not isinstance(new, Mapping):
        raise RunError(
            f"the merge reducer takes dicts, got {type(old).__name__} and {type(new).__name__}"
        )
    return {**old, **new}


REDUCERS: dict[str, Reducer] = {"last": last_write, "append": append, "merge": merge_dict}


def check_reducers(given: Mapping[str, Any] | None) -> dict[str, Reducer]:
    """``reducers={key: "last" | "append" | "merge" | function}``, checked."""
    if given is None:
        return {}
    if not isinstance(given, Mapping):
        raise ConfigurationError(
            f"reducers= takes a dict of state keys, got {type(given).__name__}"
        )
    out: dict[str, Reducer] = {}
    for key, reducer in given.items():
        if isinstance(reducer, str) and reducer in REDUCERS:
            out[key] = REDUCERS[reducer]
        elif callable(reducer):
            out[key] = reducer
        else:
            raise ConfigurationError(
                f"reducers[{key!r}]: use 'last', 'append', 'merge' or a function (old, new) -> "
                f"value, got {reducer!r}"
            )
    return out


class StateSpec:
    """The initial state (a dict or a pydantic model), its type and its reducers."""

    def __init__(self, initial: Any, reducers: Mapping[str, Any] | None) -> None:
        self.model: Any = None
        if initial is None:
            self.initial: dict[str, Any] = {}
        elif isinstance(initial, Mapping):
            self.initial = dict(initial)
        elif hasattr(type(initial), "model_validate") and hasattr(initial, "model_dump"):
            self.model = type(initial)
            self.initial = initial.model_dump(mode="json")
        else:
            raise ConfigurationError(
                f"a workflow's state= takes a dict or a pydantic model, got "
                f"{type(initial).__name__}"
            )
        self.reducers = check_reducers(reducers)

    def under(self, outer: StateSpec) -> StateSpec:
        """This spec as a node of a workflow with ``outer``'s: one state, so the outer
        reducers apply here too (this workflow's own add to them)."""
        spec = StateSpec(None, None)
        spec.model, spec.initial = self.model or outer.model, dict(outer.initial)
        spec.reducers = {**outer.reducers, **self.reducers}
        return spec

    def apply(self, state: dict[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
        """``state`` after one step's ``update`` (reducers where declared, else replace)."""
        out = dict(state)
        for key, value in update.items():
            reducer = self.reducers.get(key)
            out[key] = reducer(out[key], value) if reducer is not None and key in out else value
        return out

    def merge_branches(self, updates: list[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
        """The parallel branches' updates as one (in step order); a key two branches set
        without a reducer is a conflict, named with its branches."""
        merged: dict[str, Any] = {}
        writers: dict[str, list[str]] = {}
        for branch, update in updates:
            for key, value in update.items():
                writers.setdefault(key, []).append(branch)
                if key not in merged:
                    merged[key] = value
                    continue
                reducer = self.reducers.get(key)
                if reducer is None:
                    raise RunError(
                        f"state key {key!r} was updated by parallel branches "
                        f"{', '.join(writers[key])} and has no reducer: declare one "
                        f"(reducers={{{key!r}: 'last' | 'append' | 'merge'}})"
                    )
                merged[key] = reducer(merged[key], value)
        return merged

    def view(self, state: dict[str, Any]) -> Any:
        """What a function step reads: the dict, or the pydantic model validated from it."""
        if self.model is None:
            return dict(state)
        return self.model.model_validate(state)

    def check(self, state: dict[str, Any], node: str) -> None:
        """A typed state must still validate after ``node``'s update."""
        if self.model is None:
            return
        try:
            self.model.model_validate(state)
        except ValueError as exc:
            raise RunError(
                f"the state after workflow node {node} does not fit {self.model.__name__}: {exc}"
            ) from None
