"""The Makefile's long steps (creating the venv, the first install, Phoenix's ~80 s
install) each print one line saying what they do before they start."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
@pytest.mark.parametrize(
    ("target", "says"),
    [
        (".venv/.installed", "installing tether into .venv"),
        (".venv/.installed-dev", "installing tether with the dev extras into .venv"),
        ("phoenix", "installing arize-phoenix=="),
    ],
)
def test_each_long_step_says_what_it_does_first(tmp_path: Path, target: str, says: str) -> None:
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    (tmp_path / "pyproject.toml").write_text("")
    plan = subprocess.run(
        ["make", "-n", target],  # a dry run in an empty copy: nothing is installed
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout.splitlines()
    slow = [i for i, line in enumerate(plan) if " -m venv " in line or "pip install" in line]
    assert slow, plan
    for index in slow:
        said = [line for line in plan[:index] if line.startswith('echo "make: ')]
        assert said, f"{plan[index]!r} runs before any line says what it does: {plan}"
    assert any(says in line for line in plan), plan
