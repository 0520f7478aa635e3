"""The Temporal dev server, once per test session, and a client per test."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("temporalio")
sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from temporal_server import dev_server


@pytest.fixture(scope="session")
def temporal_address(private_dir: Path) -> Iterator[str]:
    with dev_server(private_dir) as address:
        yield address


@pytest.fixture
async def temporal_client(temporal_address: str) -> Any:
    from temporalio.client import Client

    return await Client.connect(temporal_address)
