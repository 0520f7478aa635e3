"""GeminiModel configuration (no server): keys, the model string, lazy imports, options."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tether import ConfigurationError
from tether.messages import Message
from tether.models import GeminiModel, model_from_string
from tether.models.base import ModelRequest


def test_missing_key_names_both_variables(monkeypatch):
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    with pytest.raises(ConfigurationError, match="set the GEMINI_API_KEY environment") as caught:
        model_from_string("gemini:gemini-2.5-flash")
    assert "GOOGLE_API_KEY" in str(caught.value)
    assert "vertexai=True" in str(caught.value)


def test_the_key_comes_from_gemini_api_key_then_google_api_key(monkeypatch):
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", "google-key")
    assert GeminiModel("gemini-2.5-flash").api_key == "google-key"
    monkeypatch.setenv("GEMINI_API_KEY", "gemini-key")
    assert GeminiModel("gemini-2.5-flash").api_key == "gemini-key"
    assert GeminiModel("gemini-2.5-flash", api_key="arg").api_key == "arg"


def test_the_model_string_lists_gemini_among_the_providers():
    with pytest.raises(ConfigurationError, match="gemini"):
        model_from_string("nope:model")


def test_thoughts_default_on_for_thinking_models_only():
    assert GeminiModel("gemini-2.5-flash", api_key="k").thoughts
    assert GeminiModel("gemini-3-pro-preview", api_key="k").thoughts
    assert not GeminiModel("gemini-2.0-flash", api_key="k").thoughts
    request = ModelRequest([Message.user("hi")], [])
    assert "thinking_config" not in GeminiModel("gemini-2.0-flash", api_key="k")._config(
        request, None
    )


def test_a_thinking_budget_must_be_an_int():
    with pytest.raises(ConfigurationError, match=r"thinking_budget=...\) must be an int"):
        GeminiModel("gemini-2.5-flash", api_key="k", thinking_budget="lots")  # type: ignore[arg-type]


def test_params_reach_the_config():
    model = GeminiModel("gemini-2.0-flash", api_key="k", params={"temperature": 0.2})
    config = model._config(ModelRequest([Message.user("hi")], [], "sys"), None)
    assert config["temperature"] == 0.2
    assert config["system_instruction"] == "sys"
    assert config["automatic_function_calling"] == {"disable": True}


def test_the_sdk_loads_only_when_a_model_is_built():
    code = (
        "import sys, json, tether, tether.models as m; before = 'google.genai' in sys.modules; "
        "m.GeminiModel; after = 'google.genai' in sys.modules; "
        "m.GeminiModel('gemini-2.5-flash', api_key='k'); "
        "print(json.dumps([before, after, 'google.genai' in sys.modules]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == [False, False, True]


def test_vertex_ai_without_credentials_is_a_configuration_error(monkeypatch, tmp_path):
    for var in ("GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path))  # no gcloud login to find
    monkeypatch.setenv("NO_GCE_CHECK", "True")  # no metadata server to ask
    with pytest.raises(ConfigurationError, match="could not set up Vertex AI") as caught:
        GeminiModel("gemini-2.5-flash", vertexai=True)
    assert "application default credentials" in str(caught.value)


def test_gemini_context_windows_and_the_limit_its_overflow_error_states():
    from tether.context.window import context_window, family_window, stated_limit

    assert family_window("gemini:gemini-2.5-flash") == 1_048_576
    assert family_window("gemini-1.5-pro-002") == 2_097_152
    assert context_window(GeminiModel("gemini-3-pro-preview", api_key="k")) == 1_048_576
    message = (
        "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."
    )
    assert stated_limit(message) == 1_048_576
