"""The provider-shaped fault server for the context tests (tests/servers/), on 127.0.0.1."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from servers.runner import ThreadServer, fault_app


@pytest.fixture(scope="module")
def fault() -> Iterator[ThreadServer]:
    server = ThreadServer(fault_app()).start()
    yield server
    server.stop()
