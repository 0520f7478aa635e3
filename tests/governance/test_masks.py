"""Free text through the one redaction path: secret-looking tokens are masked in every
view's scrub, and a provider's error text is redacted before it is journaled (the
configured API key, bearer and ``sk-`` tokens), then again on the way out."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ops_cli import cli

from tether import Agent
from tether.durable import SQLiteStore
from tether.errors import RunError
from tether.governance.masks import Masker, redact_text
from tether.models import OpenAIModel, RetryPolicy

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from servers.runner import ThreadServer, fault_app


@pytest.fixture(scope="module")
def fault() -> Iterator[ThreadServer]:
    server = ThreadServer(fault_app()).start()
    yield server
    server.stop()


def test_redact_text_masks_tokens_and_hidden_strings_but_not_counts() -> None:
    text = (
        'Bearer abc.def-123456 api_key=live-9999 "password": "pa55word!" '
        "sk-proj-ABCDEFGH12 max_tokens=4096 tokens: 1234 the-hidden-one"
    )
    shown = redact_text(text, {"the-hidden-one"})
    assert shown == (
        'Bearer *** api_key=*** "password": "***" *** max_tokens=4096 tokens: 1234 ***'
    )
    assert Masker(None, {}).scrub({"a": [text]}) == {"a": [redact_text(text)]}
    prose = "a basic implementation; the bearer instrument; desk-reservations"
    assert redact_text(prose) == prose
    assert redact_text("Authorization: Basic dXNlcjpwYXNz==") == "Authorization: Basic ***"


@pytest.mark.parametrize("unit", ["x", "a-", "token", "api_key=", "sk-", "Bearer ", "password"])
def test_redact_text_is_linear_on_adversarial_text(unit: str) -> None:
    text = unit * (200_000 // len(unit))
    started = time.perf_counter()
    redact_text(text + " api_key=abcd1234")
    assert time.perf_counter() - started < 1.0


def test_a_providers_error_text_is_redacted_before_it_is_journaled(
    fault: Any, tmp_path: Path
) -> None:
    db = tmp_path / "p.db"
    model = OpenAIModel(
        "e401~redact", base_url=fault.url + "/v1", api_key="sk-bad", retry=RetryPolicy(1)
    )
    store = SQLiteStore(db)
    agent = Agent(model=model, store=store, session_id="p1")
    with pytest.raises(RunError) as info:
        agent("hi")
    assert "Incorrect API key provided" in str(info.value)  # the caller's own error is whole
    assert info.value.result is not None
    assert "sk-bad" not in (info.value.result.reason or "")

    async def journal() -> str:
        try:
            entries = await store.read_entries("p1", 0)
            return json.dumps([e.data for e in entries])
        finally:
            await store.close()

    text = asyncio.run(journal())
    assert "Incorrect API key provided: ***." in text
    assert "sk-bad" not in text
    timeline = cli("sessions", "timeline", "p1", "--store", str(db), "--json")
    assert timeline.exit_code == 0, timeline.output
    assert "sk-bad" not in timeline.output
    assert "Incorrect API key provided" in timeline.output


def test_a_retried_attempts_error_text_is_redacted_before_it_is_journaled(
    fault: Any, tmp_path: Path
) -> None:
    db = tmp_path / "r.db"
    model = OpenAIModel(
        "e401,text~redact",
        base_url=fault.url + "/v1",
        api_keys=["sk-bad", "sk-good"],
        retry=RetryPolicy(2),
    )
    store = SQLiteStore(db)
    assert Agent(model=model, store=store, session_id="r1")("hi").stop_reason == "end_turn"

    async def journal() -> str:
        try:
            return json.dumps([e.data for e in await store.read_entries("r1", 0)])
        finally:
            await store.close()

    text = asyncio.run(journal())
    assert '"retries": [{' in text  # the failed attempt is journaled with its error ...
    assert "Incorrect API key provided: ***." in text
    assert "sk-bad" not in text  # ... without the key it echoed
    timeline = cli("sessions", "timeline", "r1", "--store", str(db), "--json")
    assert timeline.exit_code == 0, timeline.output
    assert "sk-bad" not in timeline.output
