"""durable/ by backend (issue 21, item 5): each backend a package owning its queries,
the neutral modules importing none of them, no cycle, no private read across modules."""

from __future__ import annotations

from pathlib import Path

import pytest
from import_graph import Package, read_package

SRC = Path(__file__).resolve().parents[2] / "src"
BACKENDS = ("tether.durable.memory", "tether.durable.sqlite", "tether.durable.postgres")


@pytest.fixture(scope="module")
def durable() -> Package:
    """The import graph of durable/ alone (its package ``__init__``, whose lazy exports
    name the backends, left out)."""
    whole = read_package(SRC)
    inside = Package(whole.root)
    for module, deps in whole.imports.items():
        if module.startswith("tether.durable."):
            inside.imports[module] = {d for d in deps if d.startswith("tether.durable.")}
            inside.modules[module] = whole.modules[module]
    return inside


def backend_of(module: str) -> str | None:
    return next((b for b in BACKENDS if module == b or module.startswith(b + ".")), None)


def test_each_backend_is_a_package_that_keeps_its_old_import_path() -> None:
    from tether.durable import MemoryStore, PostgresStore, SQLiteStore
    from tether.durable.memory import MemoryStore as OldMemory
    from tether.durable.postgres import PostgresStore as OldPostgres
    from tether.durable.sqlite import SQLiteStore as OldSQLite

    assert (OldMemory, OldSQLite, OldPostgres) == (MemoryStore, SQLiteStore, PostgresStore)
    for backend in BACKENDS:
        assert (SRC / backend.replace(".", "/") / "__init__.py").is_file()


def test_no_neutral_module_imports_a_backend(durable: Package) -> None:
    neutral = [m for m in durable.imports if backend_of(m) is None]
    assert {"tether.durable.store", "tether.durable.claims"} <= set(neutral)
    found = {m: sorted(d for d in durable.imports[m] if backend_of(d)) for m in neutral}
    assert {m: deps for m, deps in found.items() if deps} == {}


def test_no_backend_imports_another(durable: Package) -> None:
    crossed = {
        m: sorted(d for d in deps if backend_of(d) not in (None, backend_of(m)))
        for m, deps in durable.imports.items()
        if backend_of(m)
    }
    assert {m: deps for m, deps in crossed.items() if deps} == {}


def test_durable_has_no_import_cycle(durable: Package) -> None:
    assert [sorted(c) for c in durable.cycles()] == []


def test_no_module_of_durable_reads_another_modules_private_attributes(
    durable: Package,
) -> None:
    assert durable.private_reads() == {}
