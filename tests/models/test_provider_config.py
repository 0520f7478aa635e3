"""Adapter configuration (no server): missing keys, model strings, lazy imports."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tether import ConfigurationError
from tether.models import (
    AnthropicModel,
    BedrockModel,
    FallbackChain,
    OpenAIModel,
    model_from_string,
)


def test_missing_openai_key_names_the_env_var(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigurationError, match="set the OPENAI_API_KEY environment variable"):
        OpenAIModel("gpt-4.1")


def test_missing_anthropic_key_names_the_env_var(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ConfigurationError, match="ANTHROPIC_API_KEY"):
        model_from_string("anthropic:claude-sonnet-4-5")


def test_missing_aws_credentials_and_region(monkeypatch, tmp_path):
    for var in (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv(
        "AWS_EC2_METADATA_DISABLED", "true"
    )  # never ask an instance metadata service
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    with pytest.raises(ConfigurationError, match="AWS_REGION"):
        BedrockModel("anthropic.claude-x")
    with pytest.raises(ConfigurationError, match="AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"):
        BedrockModel("anthropic.claude-x", region="us-east-1")


def test_model_strings(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-y")
    assert model_from_string("openai:gpt-4.1").name == "openai:gpt-4.1"
    assert model_from_string("anthropic:claude-sonnet-4-5").name == "anthropic:claude-sonnet-4-5"
    local = model_from_string("openai-compatible:qwen3@http://127.0.0.1:8080/v1")
    assert isinstance(local, OpenAIModel)
    assert local.name == "openai-compatible:qwen3"
    with pytest.raises(ConfigurationError, match="openai-compatible:MODEL@http"):
        model_from_string("openai-compatible:qwen3")
    with pytest.raises(ConfigurationError, match="supported: openai, anthropic, bedrock"):
        model_from_string("vertex:gemini")


def test_bedrock_model_string_keeps_colons(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "a")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "b")
    monkeypatch.setenv("AWS_REGION", "us-west-2")
    model = model_from_string("bedrock:anthropic.claude-3-5-sonnet-20240620-v1:0")
    assert model.name == "bedrock:anthropic.claude-3-5-sonnet-20240620-v1:0"


def test_fallback_chain_needs_models():
    with pytest.raises(ConfigurationError, match="at least one model"):
        FallbackChain([])
    with pytest.raises(ConfigurationError, match="takes Model objects"):
        FallbackChain(["openai:gpt-4.1"])  # type: ignore[list-item]


def test_anthropic_model_is_lazy_until_used():
    code = (
        "import sys, json, tether.models as m; before = 'anthropic' in sys.modules; "
        "m.AnthropicModel; print(json.dumps([before, 'anthropic' in sys.modules]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == [False, False]  # the SDK loads in the constructor
    assert AnthropicModel.env_var == "ANTHROPIC_API_KEY"
