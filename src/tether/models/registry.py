"""Model strings (``scripted:turns.json``, later ``openai:gpt-4.1`` ...) to Model objects."""

from __future__ import annotations

import json
from pathlib import Path

from tether.errors import ConfigurationError
from tether.models.base import Model

KNOWN_PREFIXES = ("scripted",)


def model_from_string(spec: str) -> Model:
    """Build a model from ``provider:name``; the error lists what is supported."""
    provider, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise ConfigurationError(
            f"model string {spec!r} must look like 'provider:model' "
            f"(supported providers: {', '.join(KNOWN_PREFIXES)})"
        )
    if provider == "scripted":
        return _scripted(rest)
    raise ConfigurationError(
        f"model provider {provider!r} (from model string {spec!r}) is not supported by this "
        f"version of tether; supported: {', '.join(KNOWN_PREFIXES)}"
    )


def _scripted(path_text: str) -> Model:
    from tether.models.scripted import ScriptedModel

    path = Path(path_text)
    try:
        turns = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigurationError(f"cannot read the ScriptedModel script {path}: {exc}") from exc
    except ValueError as exc:
        raise ConfigurationError(
            f"the ScriptedModel script {path} is not valid JSON: {exc}"
        ) from exc
    if not isinstance(turns, list):
        raise ConfigurationError(f"the ScriptedModel script {path} must hold a JSON list of turns")
    return ScriptedModel(turns, name=f"scripted:{path.name}")
