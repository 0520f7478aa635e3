"""Structured output: the final answer validated into ``Result.output``.

``agent.run(prompt, output_type=T)`` (a pydantic model, dataclass, TypedDict or any
type pydantic validates) asks the model for a JSON value of T's schema and checks the
final answer at the output step, before ``BeforeOutput``: a valid answer becomes
``result.output`` (and ``BeforeOutput.output``); an invalid one goes back to the model
with the validation errors, at most ``retries`` times, then the run fails with
``OutputValidationError`` naming the fields.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from tether.errors import ConfigurationError, OutputValidationError
from tether.messages import Message

DEFAULT_RETRIES = 2
_FENCE = re.compile(r"^\s*```(?:json)?\s*\n(.*)\n\s*```\s*$", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Checked:
    """A final answer checked against the output type: ``value``, or ``error`` text."""

    value: Any = None
    error: str | None = None


class OutputSpec:
    """The output type of one invocation: its JSON schema and validator."""

    def __init__(self, output_type: Any, retries: int = DEFAULT_RETRIES) -> None:
        from pydantic import PydanticSchemaGenerationError, PydanticUserError, TypeAdapter

        try:
            self.adapter: TypeAdapter[Any] = TypeAdapter(output_type)
            self.schema: dict[str, Any] = self.adapter.json_schema()
        except (PydanticSchemaGenerationError, PydanticUserError) as exc:
            raise ConfigurationError(
                f"output_type={output_type!r} cannot be validated from JSON ({exc}); use a "
                "pydantic model, a dataclass, a TypedDict or a plain JSON type"
            ) from exc
        self.output_type = output_type
        self.name = getattr(output_type, "__name__", repr(output_type))
        self.schema_name = re.sub(r"[^A-Za-z0-9_-]", "_", self.name)[:64] or "output"
        self.retries = retries

    def instruction(self) -> Message:
        """The message that asks the model for the output type."""
        schema = json.dumps(self.schema, separators=(",", ":"))
        return Message.user(
            f"[tether] Give your final answer as one JSON value (no prose, no code fence) "
            f"matching this JSON schema of {self.name}: {schema}"
        )

    def check(self, text: str) -> Checked:
        """Validate the final answer's ``text``."""
        from pydantic import ValidationError

        fenced = _FENCE.match(text)
        body = fenced.group(1) if fenced else text.strip()
        try:
            return Checked(self.adapter.validate_json(body))
        except ValidationError as exc:
            return Checked(error=_explain(exc, self.name))

    def parse(self, text: str) -> Any:
        """The validated value of ``text``, or OutputValidationError."""
        checked = self.check(text)
        if checked.error is not None:
            raise OutputValidationError(checked.error)
        return checked.value


def _explain(exc: Any, name: str) -> str:
    parts = []
    for error in exc.errors()[:8]:
        where = ".".join(str(p) for p in error.get("loc", ())) or "(the value)"
        parts.append(f"{where}: {error.get('msg', 'invalid')}")
    return f"the answer does not fit {name}: " + "; ".join(parts)
