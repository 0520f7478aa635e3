"""The instruments: GenAI client histograms plus tether's counters."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from opentelemetry.metrics import CallbackOptions, Meter, Observation

_TOKEN_BUCKETS = [
    1,
    4,
    16,
    64,
    256,
    1024,
    4096,
    16384,
    65536,
    262144,
    1048576,
    4194304,
    16777216,
    67108864,
]
_DURATION_BUCKETS = [
    0.01,
    0.02,
    0.04,
    0.08,
    0.16,
    0.32,
    0.64,
    1.28,
    2.56,
    5.12,
    10.24,
    20.48,
    40.96,
    81.92,
]


class Instruments:
    """``gen_ai.client.token.usage``, ``gen_ai.client.operation.duration`` and tether's counters:
    ``tether.tool.calls`` (by ``tether.tool.status``), ``tether.interrupts`` (by
    ``tether.interrupt.source``), ``tether.model.retries`` / ``tether.model.fallbacks``
    (by ``tether.reason``), ``tether.resumes`` and ``tether.policy.decisions`` (by
    ``tether.decision``), ``tether.interventions`` (by ``tether.policy``, ``tether.action``) and the gauge
    ``tether.approvals.pending``."""

    def __init__(self, meter: Meter) -> None:
        self.token_usage = meter.create_histogram(
            "gen_ai.client.token.usage",
            unit="{token}",
            description="Number of input and output tokens used",
            explicit_bucket_boundaries_advisory=_TOKEN_BUCKETS,
        )
        self.duration = meter.create_histogram(
            "gen_ai.client.operation.duration",
            unit="s",
            description="GenAI operation duration",
            explicit_bucket_boundaries_advisory=_DURATION_BUCKETS,
        )
        self.tool_calls = meter.create_counter(
            "tether.tool.calls", unit="{call}", description="Tool calls by outcome status"
        )
        self.interrupts = meter.create_counter(
            "tether.interrupts", unit="{interrupt}", description="Interrupts raised"
        )
        self.retries = meter.create_counter(
            "tether.model.retries", unit="{retry}", description="Provider retries by reason"
        )
        self.fallbacks = meter.create_counter(
            "tether.model.fallbacks", unit="{fallback}", description="Model fallbacks by reason"
        )
        self.resumes = meter.create_counter(
            "tether.resumes", unit="{resume}", description="Suspended sessions resumed"
        )
        self.verdicts = meter.create_counter(
            "tether.interventions",
            unit="{verdict}",
            description="Intervention verdicts other than Proceed, by policy and action",
        )
        self.decisions = meter.create_counter(
            "tether.policy.decisions",
            unit="{decision}",
            description="Hook and policy decisions that changed a run (deny, guide, block)",
        )

        self.pending: int | None = None
        """Approvals pending in the store, as last read (None: not read yet)."""
        meter.create_observable_gauge(
            "tether.approvals.pending",
            callbacks=[self._observe_pending],
            unit="{approval}",
            description="Approvals waiting for a decision in the store (read when runs suspend or resume)",
        )

    def _observe_pending(self, options: CallbackOptions) -> Iterable[Observation]:
        if self.pending is not None:
            yield Observation(self.pending)

    def tokens(self, attributes: dict[str, Any], input_tokens: int, output_tokens: int) -> None:
        self.token_usage.record(input_tokens, {**attributes, "gen_ai.token.type": "input"})
        self.token_usage.record(output_tokens, {**attributes, "gen_ai.token.type": "output"})
