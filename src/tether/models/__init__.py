"""Models: the Model protocol and the built-in adapters.

The provider adapters load their SDK only when first used, so ``import tether``
stays fast: ``from tether.models import OpenAIModel`` imports the adapter module,
and the SDK is imported when a model is constructed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tether.models.base import Model, ModelRequest, ModelResponse
from tether.models.registry import model_from_string
from tether.models.scripted import ScriptedModel

if TYPE_CHECKING:
    from tether.models.anthropic_model import AnthropicModel
    from tether.models.bedrock_model import BedrockModel
    from tether.models.failover import FailoverReason, ProviderError
    from tether.models.fallback import FallbackChain
    from tether.models.gemini_model import GeminiModel
    from tether.models.openai_model import OpenAIModel
    from tether.models.openai_responses_model import OpenAIResponsesModel
    from tether.models.retry import RetryPolicy

_LAZY = {
    "OpenAIModel": "tether.models.openai_model",
    "OpenAIResponsesModel": "tether.models.openai_responses_model",
    "AnthropicModel": "tether.models.anthropic_model",
    "BedrockModel": "tether.models.bedrock_model",
    "GeminiModel": "tether.models.gemini_model",
    "FallbackChain": "tether.models.fallback",
    "FailoverReason": "tether.models.failover",
    "ProviderError": "tether.models.failover",
    "RetryPolicy": "tether.models.retry",
}

__all__ = [
    "AnthropicModel",
    "BedrockModel",
    "FailoverReason",
    "FallbackChain",
    "GeminiModel",
    "Model",
    "ModelRequest",
    "ModelResponse",
    "OpenAIModel",
    "OpenAIResponsesModel",
    "ProviderError",
    "RetryPolicy",
    "ScriptedModel",
    "model_from_string",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tether.models' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
