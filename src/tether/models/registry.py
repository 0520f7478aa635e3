"""Model strings to Model objects.

``openai:gpt-4.1``, ``openai-responses:o4-mini`` (the Responses API), ``anthropic:claude-sonnet-4-5``,
``bedrock:anthropic.claude-3-5-sonnet-20240620-v1:0``,
``gemini:gemini-2.5-flash`` (key from GEMINI_API_KEY or GOOGLE_API_KEY),
``openai-compatible:MODEL@http://127.0.0.1:8080/v1`` (key from OPENAI_API_KEY,
else "none"), ``scripted:path.json``.
"""

from __future__ import annotations

import json
from pathlib import Path

from tether.errors import ConfigurationError
from tether.models.base import Model

KNOWN_PREFIXES = (
    "openai",
    "anthropic",
    "bedrock",
    "gemini",
    "openai-responses",
    "openai-compatible",
    "scripted",
)


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
    if provider == "openai":
        from tether.models.openai_model import OpenAIModel

        return OpenAIModel(rest)
    if provider == "openai-responses":
        from tether.models.openai_responses_model import OpenAIResponsesModel

        return OpenAIResponsesModel(rest)
    if provider == "anthropic":
        from tether.models.anthropic_model import AnthropicModel

        return AnthropicModel(rest)
    if provider == "bedrock":
        from tether.models.bedrock_model import BedrockModel

        return BedrockModel(rest)
    if provider == "gemini":
        from tether.models.gemini_model import GeminiModel

        return GeminiModel(rest)
    if provider == "openai-compatible":
        return _compatible(spec, rest)
    raise ConfigurationError(
        f"model provider {provider!r} (from model string {spec!r}) is not supported by this "
        f"version of tether; supported: {', '.join(KNOWN_PREFIXES)}"
    )


def _compatible(spec: str, rest: str) -> Model:
    import os

    from tether.models.openai_model import OpenAIModel

    model, at, url = rest.rpartition("@")
    if not at or not model or not url.startswith(("http://", "https://")):
        raise ConfigurationError(
            f"model string {spec!r} must look like 'openai-compatible:MODEL@http://host:port/v1'"
        )
    key = os.environ.get("OPENAI_API_KEY") or "none"
    return OpenAIModel(model, base_url=url, api_key=key, provider="openai-compatible")


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
