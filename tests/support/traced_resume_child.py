"""The README's durable example, traced, one step per process (tests/observe).

Usage: python traced_resume_child.py DB EFFECTS SPANS MODE(continue|link) start | resume ANSWERS_JSON
Spans are appended to SPANS as JSON lines (the SDK's ConsoleSpanExporter writing to a file),
and also exported over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set.
Prints one JSON line: stop_reason and interrupt ids of the run.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SimpleSpanProcessor,
)
from scripted_resume_child import build

from tether import Agent
from tether.observe import instrument


def app_for_edits(session_id: str) -> Agent:
    """``--app`` factory for ``tether approvals approve --edit``: the session's tools, to
    check the edited arguments (nothing is run or stored)."""
    return build(":memory:", Path(os.devnull))


def main() -> None:
    db, effects, spans, mode, step, *rest = sys.argv[1:]
    with open(spans, "a", encoding="utf-8") as out:
        provider = TracerProvider()
        exporter = ConsoleSpanExporter(out=out, formatter=lambda s: s.to_json(indent=None) + "\n")
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        if os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):  # also to a real backend
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        agent = build(db, Path(effects))
        instrument(agent, tracer_provider=provider, resume=mode)  # type: ignore[arg-type]
        if step == "start":
            result = agent("clean up the temp files")
        else:
            result = agent.resume(json.loads(rest[0]))
        provider.shutdown()
    print(
        json.dumps(
            {"stop_reason": result.stop_reason, "interrupts": [i.id for i in result.interrupts]}
        )
    )


if __name__ == "__main__":
    main()
