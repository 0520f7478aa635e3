import os
import subprocess
import sys

import tether.tools


def test_public_names() -> None:
    assert set(tether.tools.__all__) == {
        "CancelSignal",
        "Tool",
        "ToolContext",
        "ToolOutput",
        "ToolSource",
        "as_tool",
        "clarify",
        "delegate",
        "describe_available",
        "expand_tools",
        "format_tool_output",
        "plan_batches",
        "repair_tool_name",
        "tool",
        "tool_sources",
    }


def test_import_does_not_load_pydantic() -> None:
    code = (
        "import sys, tether.tools\n"
        "heavy = [m for m in ('pydantic', 'pydantic_core', 'docstring_parser') if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == ""
