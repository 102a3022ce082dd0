"""The import graph of a package read from its source (every import: top-level, in functions, under TYPE_CHECKING).

Used by tests/test_structure.py to keep autoenv's layers in order: no module imports one on a higher floor of
ARCHITECTURE.md's "Layers" (read from the page itself, so the page and the check cannot disagree), and no module
imports, directly or through others, a module that imports it back. Lazy imports count: a loop hidden in a function
is a loop all the same (which side owns the idea is as unclear), and it is how most loops start.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path


def modules(package_dir: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` under ``package_dir`` (a package's ``__init__`` by its name)."""
    root = package_dir.parent
    out = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _owner(name: str, known: dict[str, Path]) -> str | None:
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports(package_dir: Path) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (``from pkg.mod import name`` counts as pkg.mod, or pkg.mod.name
    when that is a module)."""
    known = modules(package_dir)
    top = package_dir.name
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        deps: set[str] = set()
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                deps |= {_owner(a.name, known) for a in node.names if a.name.split(".")[0] == top}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = name.split(".") if is_package else name.split(".")[:-1]
                    base = base[: len(base) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                if source.split(".")[0] != top:
                    continue
                for alias in node.names:
                    full = f"{source}.{alias.name}"
                    deps.add(full if full in known else _owner(source, known))
        deps.discard(None)
        deps.discard(name)
        graph[name] = deps  # type: ignore[assignment]
    return graph


def loops(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (``a -> b -> ... -> a``) per strongly connected group of modules, each as the modules in order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []
    counter = 0

    def visit(v: str) -> None:  # Tarjan; the package is small enough for recursion
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(group)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    cycles = []
    for group in groups:
        start = min(group)
        # shortest way back to the start inside the group (breadth first)
        paths = {start: [start]}
        frontier = [start]
        cycle = None
        while frontier and cycle is None:
            nxt = []
            for v in frontier:
                for w in sorted(graph[v] & group):
                    if w == start:
                        cycle = paths[v] + [start]
                        break
                    if w not in paths:
                        paths[w] = paths[v] + [w]
                        nxt.append(w)
                if cycle:
                    break
            frontier = nxt
        cycles.append(cycle or sorted(group))
    return cycles


def layers(architecture: str) -> list[list[str]]:
    """The floors of the "Layers" section's drawing, top first: each line names its modules before its description
    (two spaces or more), joined by `` · `` (``grading · taskfmt``), as dotted names under the package."""
    section = architecture.split("## Layers", 1)[1]
    drawing = section.split("```", 2)[1]
    floors = []
    for line in drawing.splitlines():
        names = re.split(r"\s{2,}", line.strip(), maxsplit=1)[0]
        if names:
            floors.append([n.strip() for n in names.split(" · ")])
    return floors


def floor_of(module: str, floors: list[list[str]]) -> int | None:
    """The index (0 = top) of the floor whose name is the longest prefix of ``module`` (``pkg.a.b`` is on ``a``'s
    floor unless ``a.b`` has one of its own); None for a module on no floor."""
    name = module.partition(".")[2]
    best, length = None, -1
    for index, floor in enumerate(floors):
        for prefix in floor:
            if (name == prefix or name.startswith(prefix + ".")) and len(prefix) > length:
                best, length = index, len(prefix)
    return best


def upward(graph: dict[str, set[str]], floors: list[list[str]]) -> list[tuple[str, str]]:
    """Every import that runs up: ``(module, what it imports)`` where the import's floor is above the module's."""
    found = []
    for module, deps in sorted(graph.items()):
        mine = floor_of(module, floors)
        for dep in sorted(deps):
            theirs = floor_of(dep, floors)
            if mine is not None and theirs is not None and theirs < mine:
                found.append((module, dep))
    return found
