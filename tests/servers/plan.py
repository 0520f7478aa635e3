"""Request plans: the model name says what the fault server does on each request.

A model name ``step1,step2,...~tag`` makes request *i* (counted per full model
name) play step *i*; the last step repeats. ``~tag`` only keeps counters apart.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Recorder:
    """What the fault server received, for assertions."""

    requests: list[dict[str, Any]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next_step(self, model: str, path: str, headers: dict[str, str], body: Any) -> str:
        plan = model.split("~", 1)[0].split(",")
        with self.lock:
            index = self.counts.get(model, 0)
            self.counts[model] = index + 1
            self.requests.append({"model": model, "path": path, "headers": headers, "body": body})
        return plan[min(index, len(plan) - 1)]

    def for_model(self, model: str) -> list[dict[str, Any]]:
        with self.lock:
            return [r for r in self.requests if r["model"] == model]
