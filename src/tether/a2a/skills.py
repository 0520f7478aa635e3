"""The agent card's skills given by hand (``tether serve --a2a-skills skills.json``)
instead of one per tool: a JSON list of ``{"id", "name", "description", "tags"?,
"examples"?}``, checked when the server starts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

from tether.errors import ConfigurationError

MAX_BYTES: Final = 256 * 1024
MAX_SKILLS: Final = 100
MAX_TEXT: Final = 1000
FIELDS: Final = ("id", "name", "description")


def load_skills(path: str | Path) -> list[dict[str, Any]]:
    """The skills in the file at ``path``; a ConfigurationError names the file, the
    skill and the field that is wrong."""
    where = Path(path)
    try:
        raw = where.read_bytes()[: MAX_BYTES + 1]
    except OSError as exc:
        raise ConfigurationError(f"--a2a-skills {where}: cannot read it ({exc})") from exc
    if len(raw) > MAX_BYTES:
        raise ConfigurationError(f"--a2a-skills {where}: larger than {MAX_BYTES} bytes")
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise ConfigurationError(f"--a2a-skills {where}: not JSON ({exc})") from exc
    if not isinstance(data, list) or not data or len(data) > MAX_SKILLS:
        raise ConfigurationError(
            f"--a2a-skills {where}: give a JSON list of 1 to {MAX_SKILLS} skills"
        )
    return [_skill(where, i, item) for i, item in enumerate(data)]


def _skill(where: Path, index: int, item: Any) -> dict[str, Any]:
    label = f"--a2a-skills {where}: skill {index}"
    if not isinstance(item, dict):
        raise ConfigurationError(f"{label} is not an object")
    unknown = sorted(set(item) - {*FIELDS, "tags", "examples"})
    if unknown:
        raise ConfigurationError(f"{label}: unknown field(s) {', '.join(unknown)}")
    out: dict[str, Any] = {}
    for field in FIELDS:
        value = item.get(field)
        if not isinstance(value, str) or not value.strip():
            raise ConfigurationError(f"{label}: {field!r} must be a non-empty string")
        out[field] = value.strip()[:MAX_TEXT]
    for field in ("tags", "examples"):
        value = item.get(field, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigurationError(f"{label}: {field!r} must be a list of strings")
        out[field] = [v[:MAX_TEXT] for v in value[:MAX_SKILLS]]
    return out
