"""Execution: the grouped knobs (concurrency, retry bound, lease, output buffering)."""

from __future__ import annotations

import pytest

from tether import Agent, ConfigurationError, Execution
from tether.models import ScriptedModel


def test_defaults() -> None:
    execution = Execution()
    assert (execution.max_concurrency, execution.max_retries) == (8, 3)
    assert execution.lease_ttl == 30.0
    assert execution.buffer_output is None
    agent = Agent(model=ScriptedModel(["x"]))
    assert agent.execution == execution
    assert agent.buffer_output is False


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"max_concurrency": 0}, "Execution(max_concurrency=...) must be an int >= 1, got 0"),
        ({"max_concurrency": 2.5}, "Execution(max_concurrency=...) must be an int >= 1"),
        ({"max_retries": -1}, "Execution(max_retries=...) must be an int >= 0, got -1"),
        ({"max_retries": True}, "Execution(max_retries=...) must be an int >= 0, got True"),
        ({"lease_ttl": 0}, "Execution(lease_ttl=...) must be a positive number of seconds"),
        ({"lease_ttl": "30"}, "Execution(lease_ttl=...) must be a positive number of seconds"),
    ],
)
def test_bad_values_are_refused(options: dict[str, object], words: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        Execution(**options)  # type: ignore[arg-type]
    assert words in str(info.value)


def test_buffering_follows_agent_hooks_unless_set() -> None:
    allow = [lambda ctx: {"decision": "allow"}]
    assert Agent(model=ScriptedModel(["x"]), agent_hooks=allow).buffer_output is True
    explicit = Agent(
        model=ScriptedModel(["x"]), agent_hooks=allow, execution=Execution(buffer_output=False)
    )
    assert explicit.buffer_output is False


def test_the_constructor_has_at_most_sixteen_parameters() -> None:
    import inspect

    parameters = list(inspect.signature(Agent.__init__).parameters)[1:]
    assert len(parameters) <= 16, parameters
