"""The three-level tree of agent_tree.py (planner -> researcher -> two parallel coders,
a Confirm before every ``write``) as a Temporal app: ``temporal_tree_app:agent_factory``.
``TETHER_TEMPORAL_OUT``: the file ``write`` appends to."""

from __future__ import annotations

import os
from pathlib import Path

from agent_tree import build

from tether import Agent


def agent_factory(session_id: str) -> Agent:
    return build(None, Path(os.environ.get("TETHER_TEMPORAL_OUT", os.devnull)))
