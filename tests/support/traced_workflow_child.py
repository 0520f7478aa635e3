"""workflow_agents' review workflow traced whole (``instrument(wf)``), one step per process
(tests/workflows/test_observe.py).

Usage: python traced_workflow_child.py DB EFFECTS SPANS start | resume ANSWERS_JSON
Spans are appended to SPANS as JSON lines. Prints one JSON line: stop_reason and interrupt ids.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor
from workflow_agents import open_store, review_workflow

from tether.observe import instrument


def main() -> None:
    db, effects, spans, step, *rest = sys.argv[1:]
    with open(spans, "a", encoding="utf-8") as out:
        provider = TracerProvider()
        exporter = ConsoleSpanExporter(out=out, formatter=lambda s: s.to_json(indent=None) + "\n")
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        wf = review_workflow(open_store(db), Path(effects))
        instrument(wf, tracer_provider=provider)
        result = wf.run("the plan") if step == "start" else wf.resume(json.loads(rest[0]))
        provider.shutdown()
    interrupts = [i.id for i in result.interrupts]
    print(json.dumps({"stop_reason": result.stop_reason, "interrupts": interrupts}))


if __name__ == "__main__":
    main()
