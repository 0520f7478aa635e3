"""durable/ is storage: it imports nothing above it (issue 21, item 5). Governance (the
approval rules, redaction, the edit rule) imports durable/, never the reverse; the stores
reach it only through the rules installed in tether.durable.rules."""

from __future__ import annotations

from pathlib import Path

from import_graph import read_package

SRC = Path(__file__).resolve().parents[2] / "src"
BELOW = ("tether.durable", "tether.errors", "tether.messages", "tether.session_ids")


def _in(module: str, roots: tuple[str, ...]) -> bool:
    return any(module == r or module.startswith(r + ".") for r in roots)


def test_durable_imports_nothing_above_it_at_any_level() -> None:
    package = read_package(SRC)
    upward = {
        module: sorted(d for d in deps if not _in(d, BELOW))
        for module, deps in package.imports.items()
        if _in(module, ("tether.durable",))
    }
    assert {m: deps for m, deps in upward.items() if deps} == {}


def test_governance_imports_durable_and_durable_is_in_no_cycle_with_it() -> None:
    package = read_package(SRC)
    assert "tether.durable.approval_types" in package.imports["tether.governance.approvals"]
    for cycle in package.cycles():
        durable = {m for m in cycle if _in(m, ("tether.durable",))}
        assert durable == set() or durable == cycle, sorted(cycle)
