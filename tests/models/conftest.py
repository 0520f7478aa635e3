"""Fixtures for the provider tests: the fault server and llm-katan, on 127.0.0.1."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from servers.runner import KatanProcess, ThreadServer, fault_app, katan_app


@pytest.fixture(scope="session")
def fault() -> Iterator[ThreadServer]:
    """The project's provider-shaped fault server (tests/servers/)."""
    server = ThreadServer(fault_app()).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def katan() -> Iterator[KatanProcess]:
    """llm-katan (echo backend) started from its CLI; it auto-calls the first tool."""
    process = KatanProcess().start()
    yield process
    process.stop()


@pytest.fixture(scope="session")
def katan_with() -> Iterator[Callable[..., ThreadServer]]:
    """llm-katan's own app in-process, one instance per failure setting (cached)."""
    servers: dict[str, ThreadServer] = {}

    def start(**settings: Any) -> ThreadServer:
        key = repr(sorted(settings.items()))
        if key not in servers:
            servers[key] = ThreadServer(katan_app(**settings)).start()
        return servers[key]

    yield start
    for server in servers.values():
        server.stop()
