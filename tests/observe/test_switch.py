"""How tracing is turned on: a global tracer provider (automatic), instrument(), or
hooks=[Tracing(...)]; and nothing is registered when it is off."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from tether import Agent
from tether.control import BeforeInvocation
from tether.models import ScriptedModel
from tether.observe import Tracing

PROBE = """
import json, sys
{setup}
from tether import Agent
from tether.control import BeforeInvocation
from tether.models import ScriptedModel
agent = Agent(model=ScriptedModel(["hi"]))
agent("hello")
print(json.dumps({{"hooked": agent.hooks.has(BeforeInvocation), "observers": len(agent.observers),
                  "otel_loaded": "opentelemetry" in sys.modules,
                  "observe_loaded": "tether.observe" in sys.modules{extra}}}))
"""

WITH_PROVIDER = """
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
spans = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(spans))
trace.set_tracer_provider(provider)
"""


def probe(setup: str, extra: str = "", env: dict[str, str] | None = None) -> dict[str, Any]:
    import os

    code = PROBE.format(setup=setup, extra=extra)
    full_env = {**os.environ, **(env or {})}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=full_env
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def test_without_opentelemetry_loaded_nothing_is_imported_or_registered() -> None:
    assert probe("") == {
        "hooked": False,
        "observers": 0,
        "otel_loaded": False,
        "observe_loaded": False,
    }


def test_opentelemetry_without_a_provider_registers_nothing() -> None:
    found = probe("import opentelemetry.trace")
    assert found == {"hooked": False, "observers": 0, "otel_loaded": True, "observe_loaded": False}


def test_a_global_tracer_provider_turns_tracing_on_for_agents_built_after_it() -> None:
    extra = ', "spans": [s.name for s in spans.get_finished_spans()]'
    found = probe(WITH_PROVIDER, extra)
    assert found["hooked"] is True
    assert found["observers"] == 1
    assert found["spans"] == ["chat scripted", "invoke_agent tether"]


def test_tether_tracing_off_keeps_agents_untraced_despite_a_global_provider() -> None:
    extra = ', "spans": [s.name for s in spans.get_finished_spans()]'
    found = probe(WITH_PROVIDER, extra, env={"TETHER_TRACING": "off"})
    assert (found["hooked"], found["observers"], found["spans"]) == (False, 0, [])


def test_a_tracing_passed_in_hooks_is_the_one_used(otel: Any) -> None:
    tracing = Tracing(tracer_provider=otel.tracer_provider, meter_provider=otel.meter_provider)
    agent = Agent(model=ScriptedModel(["hi"]), hooks=[tracing])
    assert agent.hooks.has(BeforeInvocation)
    assert len(agent.observers) == 1
    agent("hello")
    assert [s.name for s in otel.spans()] == ["chat scripted", "invoke_agent tether"]


def test_one_tracing_serves_several_agents_without_mixing_their_spans(otel: Any) -> None:
    tracing = Tracing(tracer_provider=otel.tracer_provider)
    one = Agent(model=ScriptedModel(["one"]), hooks=[tracing])
    two = Agent(model=ScriptedModel(["two"]), hooks=[tracing])
    one("a")
    two("b")
    roots = otel.named("invoke_agent")
    assert [r.attributes["gen_ai.conversation.id"] for r in roots] == [
        one.session_id,
        two.session_id,
    ]
    assert roots[0].context.trace_id != roots[1].context.trace_id


def test_instrumenting_a_traced_agent_twice_is_refused(otel: Any) -> None:
    import pytest

    from tether.errors import ConfigurationError
    from tether.observe import instrument

    agent = Agent(
        model=ScriptedModel(["hi"]), hooks=[Tracing(tracer_provider=otel.tracer_provider)]
    )
    with pytest.raises(ConfigurationError, match="already traced"):
        instrument(agent, tracer_provider=otel.tracer_provider)
    agent("hello")
    assert len(otel.named("invoke_agent")) == 1


PROVIDER_AFTER_AGENT = """
import json, sys
from tether import Agent
from tether.control import BeforeInvocation
from tether.models import ScriptedModel
agent = Agent(model=ScriptedModel(["hi", "again"]))
agent("before any provider")
{setup}
agent("hello")
print(json.dumps({{"hooked": agent.hooks.has(BeforeInvocation), "observers": len(agent.observers),
                  "spans": [s.name for s in spans.get_finished_spans()]}}))
"""


def test_an_agent_built_before_the_provider_is_traced_from_its_next_run() -> None:
    """The rule does not depend on construction order: a run that starts while a global
    provider is set is traced (issue 21: only agents built after it were)."""
    import os

    code = PROVIDER_AFTER_AGENT.format(setup=WITH_PROVIDER)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=os.environ
    )
    assert out.returncode == 0, out.stderr
    found = json.loads(out.stdout)
    assert (found["hooked"], found["observers"]) == (True, 1)
    assert found["spans"] == ["chat scripted", "invoke_agent tether"]  # the second run only


def test_built_after_the_provider_is_traced_from_its_first_run_not_at_construction() -> None:
    extra = ', "spans": [s.name for s in spans.get_finished_spans()]'
    setup = WITH_PROVIDER + "\nfrom tether import Agent as _A\n"
    code_extra = extra + ', "hooked_before_run": hooked_before_run'
    found = probe(
        setup
        + "from tether.models import ScriptedModel as _S\n"
        + "from tether.control import BeforeInvocation as _B\n"
        + "hooked_before_run = _A(model=_S(['x'])).hooks.has(_B)\n",
        code_extra,
    )
    assert found["hooked_before_run"] is False
    assert (found["hooked"], found["observers"]) == (True, 1)
    assert found["spans"] == ["chat scripted", "invoke_agent tether"]


def test_an_agent_instrumented_by_hand_under_a_global_provider_is_traced_once() -> None:
    extra = ', "spans": [s.name for s in spans.get_finished_spans()]'
    setup = WITH_PROVIDER + (
        "\nfrom tether import Agent as _A\nfrom tether.models import ScriptedModel as _S\n"
        "from tether.observe import instrument\n"
        "mine = _A(model=_S(['x']))\ninstrument(mine)\nmine('go')\n"
    )
    found = probe(setup, extra)
    # mine's run and the probe agent's run: one invoke_agent span each
    assert found["spans"].count("invoke_agent tether") == 2
