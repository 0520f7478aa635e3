"""The AGENT-HOOKS conformance kit against tether's real Agent loop.

The kit's pytest plugin (``agent_hooks.ctk.plugin``, auto-registered by the
``agent-hooks-sdk`` package) parametrizes ``agent_hooks_vector`` and reads
``--agent-hooks-harness=ctk_harness:TetherHarness``; without the option the
tether harness is used too (never the kit's reference harness).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # makes `ctk_harness` importable

from ctk_harness import TetherHarness


@pytest.fixture
def agent_hooks_harness(request: pytest.FixtureRequest) -> type:
    spec = request.config.getoption("--agent-hooks-harness", default=None)
    if spec is None:
        return TetherHarness
    from agent_hooks.ctk.plugin import _load_harness

    harness: type = _load_harness(spec)
    return harness
