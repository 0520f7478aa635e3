"""The ``tether`` CLI invoked in-process (typer's CliRunner) for the ops tests."""

from __future__ import annotations

from typing import Any

from typer.testing import CliRunner

from tether.ops.cli import app

ENV: dict[str, str | None] = {"COLUMNS": "250", "NO_COLOR": "1", "TETHER_STORE": None}


def cli(*args: str) -> Any:
    """``tether *args`` in a 250-column terminal without colour or TETHER_STORE; it may exit
    with any code, but must not raise nor print a traceback."""
    result = CliRunner(env=ENV).invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    return result
