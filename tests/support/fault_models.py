"""The three provider adapters pointed at the fault server (tests/servers), for tests.

Each model gets a fresh name: the fault server keeps a plan's progress per model name,
so two tests never share one. Further keyword arguments go to the adapter.
"""

from __future__ import annotations

import itertools
from typing import Any

from tether.models import AnthropicModel, BedrockModel, OpenAIModel, RetryPolicy

_names = itertools.count()


def _name(plan: str, tag: str) -> str:
    return f"{plan}~{tag}{next(_names)}"


def openai_at(
    fault: Any, plan: str, *, tag: str = "", retry: RetryPolicy, **kwargs: Any
) -> OpenAIModel:
    return OpenAIModel(
        _name(plan, tag), base_url=fault.url + "/v1", api_key="sk-test", retry=retry, **kwargs
    )


def claude_at(
    fault: Any, plan: str, *, tag: str = "", retry: RetryPolicy, **kwargs: Any
) -> AnthropicModel:
    return AnthropicModel(_name(plan, tag), api_key="k", base_url=fault.url, retry=retry, **kwargs)


def bedrock_at(
    fault: Any, plan: str, *, tag: str = "", retry: RetryPolicy, **kwargs: Any
) -> BedrockModel:
    return BedrockModel(
        _name(plan, tag),
        region="us-east-1",
        endpoint_url=fault.url,
        aws_access_key_id="AKIDTEST",
        aws_secret_access_key="secret",
        retry=retry,
        **kwargs,
    )
