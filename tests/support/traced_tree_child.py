"""secret_tree's two-level tree (a Confirm before the child's login), traced, one step per
process (tests/observe/test_tree.py).

Usage: python traced_tree_child.py DB SPANS MODE(continue|link) start | resume ANSWERS_JSON
Every agent of the tree is instrumented; spans are appended to SPANS as JSON lines. Prints
one JSON line: stop_reason and the interrupt ids.
"""

from __future__ import annotations

import json
import sys

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor
from secret_tree import agents_of, tree

from tether.durable import SQLiteStore
from tether.observe import instrument


def main() -> None:
    db, spans, mode, step, *rest = sys.argv[1:]
    with open(spans, "a", encoding="utf-8") as out:
        provider = TracerProvider()
        exporter = ConsoleSpanExporter(out=out, formatter=lambda s: s.to_json(indent=None) + "\n")
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        lead = tree(SQLiteStore(db), "s1", confirm=True)
        for agent in agents_of(lead):
            instrument(agent, tracer_provider=provider, resume=mode)  # type: ignore[arg-type]
        result = lead("go") if step == "start" else lead.resume(json.loads(rest[0]))
        provider.shutdown()
    interrupts = [i.id for i in result.interrupts]
    print(json.dumps({"stop_reason": result.stop_reason, "interrupts": interrupts}))


if __name__ == "__main__":
    main()
