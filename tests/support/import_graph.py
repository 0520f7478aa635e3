"""The structure of src/tether as its source states it: imports at every level, and the
private attributes a module reads off objects of another module.

Read with ``ast`` only (nothing is imported). An import counts wherever it stands: at the
top, inside a function, or under ``if TYPE_CHECKING:``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Package:
    root: Path
    modules: dict[str, Path] = field(default_factory=dict)
    imports: dict[str, set[str]] = field(default_factory=dict)

    def importers_of(self, module: str) -> set[str]:
        return {m for m, deps in self.imports.items() if module in deps}

    def cycles(self) -> list[set[str]]:
        """The strongly connected components of more than one module, largest first."""
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        stack: list[str] = []
        on_stack: set[str] = set()
        found: list[set[str]] = []
        counter = 0
        for start in sorted(self.imports):
            if start in index:
                continue
            work: list[tuple[str, list[str]]] = [(start, sorted(self.imports[start]))]
            index[start] = low[start] = counter
            counter += 1
            stack.append(start)
            on_stack.add(start)
            while work:
                node, todo = work[-1]
                if todo:
                    nxt = todo.pop()
                    if nxt not in index:
                        index[nxt] = low[nxt] = counter
                        counter += 1
                        stack.append(nxt)
                        on_stack.add(nxt)
                        work.append((nxt, sorted(self.imports[nxt])))
                    elif nxt in on_stack:
                        low[node] = min(low[node], index[nxt])
                    continue
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component: set[str] = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(component)
        return sorted(found, key=len, reverse=True)

    def private_reads(self) -> dict[str, list[str]]:
        """By module: ``obj._name`` reads and writes where ``_name`` is not the module's own
        (not defined, assigned, imported or a parameter there) and ``obj`` is not self/cls."""
        found: dict[str, list[str]] = {}
        for name, path in sorted(self.modules.items()):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            own = _own_names(tree)
            for node in ast.walk(tree):
                if not isinstance(node, ast.Attribute):
                    continue
                attr = node.attr
                if not attr.startswith("_") or attr.startswith("__") or attr in own:
                    continue
                owner = node.value
                if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
                    continue
                if (
                    isinstance(owner, ast.Call)
                    and isinstance(owner.func, ast.Name)
                    and owner.func.id == "super"
                ):
                    continue
                found.setdefault(name, []).append(f"{path.name}:{node.lineno} {ast.unparse(node)}")
        return found


def read_package(src: Path, top: str = "tether") -> Package:
    root = src / top
    package = Package(root)
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        package.modules[".".join(parts)] = path
    for name, path in package.modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        deps: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    deps.update(_known(package, alias.name))
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(name, path.name == "__init__.py", node)
                for alias in node.names:
                    deps.update(_known(package, f"{base}.{alias.name}") or _known(package, base))
        deps.discard(name)
        package.imports[name] = deps
    return package


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    parts = module.split(".")
    if not is_package:
        parts.pop()
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join([*parts, *([node.module] if node.module else [])])


def _known(package: Package, dotted: str) -> set[str]:
    """The module ``dotted`` names (or the closest enclosing one of the package)."""
    while dotted:
        if dotted in package.modules:
            return {dotted}
        dotted = dotted.rpartition(".")[0]
    return set()


def _own_names(tree: ast.AST) -> set[str]:
    own: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            own.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            own.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            own.add(node.id)
        elif isinstance(node, ast.arg):
            own.add(node.arg)
        elif isinstance(node, ast.alias):
            own.add(node.asname or node.name.rpartition(".")[2])
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            own.add(node.target.id)
        elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__slots__" for t in node.targets
        ):
            own.update(
                c.value
                for c in ast.walk(node.value)
                if isinstance(c, ast.Constant) and isinstance(c.value, str)
            )
    return own
