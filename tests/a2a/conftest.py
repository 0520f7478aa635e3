"""One ``tether serve --app a2a_app:agent_factory`` per test module (a subprocess)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from a2a_serve import Served, served


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with served(tmp_path_factory.mktemp("a2a")) as running:
        yield running
