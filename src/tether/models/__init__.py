"""Models: the Model protocol and the built-in adapters."""

from tether.models.base import Model, ModelRequest, ModelResponse
from tether.models.registry import model_from_string
from tether.models.scripted import ScriptedModel

__all__ = ["Model", "ModelRequest", "ModelResponse", "ScriptedModel", "model_from_string"]
