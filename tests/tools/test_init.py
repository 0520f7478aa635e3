import importlib
import os
import subprocess
import sys

import pytest

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
        "execute_code",
        "memory",
        "session_search",
        "todo",
        "tool",
    }


LOOP_INTERNALS = {
    "describe_available": "tether.tools.repair",
    "repair_tool_name": "tether.tools.repair",
    "plan_batches": "tether.tools.planner",
    "format_tool_output": "tether.tools.output",
    "expand_tools": "tether.tools.source",
    "tool_sources": "tether.tools.source",
}


@pytest.mark.parametrize(("name", "module"), sorted(LOOP_INTERNALS.items()))
def test_loop_internals_still_import_with_a_deprecation_warning(name: str, module: str) -> None:
    with pytest.warns(DeprecationWarning, match=f"import it from {module}"):
        value = getattr(tether.tools, name)
    assert value is getattr(importlib.import_module(module), name)


def test_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = tether.tools.nope  # type: ignore[attr-defined]


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


def test_the_opt_in_tools_stay_functions_after_their_modules_are_imported() -> None:
    """A submodule import binds its name on the package: ``tether.tools.clarify`` (and
    the others named like their module) must still be the function afterwards."""
    import importlib

    import tether.tools

    for name in ("clarify", "todo", "memory", "execute_code", "session_search"):
        importlib.import_module(f"tether.tools.{name}")
        assert callable(getattr(tether.tools, name)), name
        assert not isinstance(getattr(tether.tools, name), type(tether.tools)), name
