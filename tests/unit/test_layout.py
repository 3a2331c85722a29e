"""The package's import graph has no circle (a module never imports one that imports it back,
not even inside a function or for types)."""

from __future__ import annotations

import ast
from pathlib import Path

import ragrecall

ROOT = Path(ragrecall.__file__).parent


def _module(path: Path) -> tuple[str, list[str]]:
    parts = ["ragrecall", *path.relative_to(ROOT).with_suffix("").parts]
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), parts[:-1]
    return ".".join(parts), parts[:-1]


def _graph() -> dict[str, set[str]]:
    modules = {_module(p)[0]: p for p in ROOT.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = _module(path)[1]
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom) or not node.level:
                continue
            base = package[: len(package) - node.level + 1]
            target = ".".join([*base, *([node.module] if node.module else [])])
            for candidate in (target, *(f"{target}.{a.name}" for a in node.names)):
                if candidate in modules and candidate != name:
                    deps.add(candidate)
        graph[name] = deps
    return graph


def test_no_import_circle() -> None:
    graph = _graph()
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> None:
        assert name not in path, " -> ".join([*path[path.index(name) :], name])
        if name in done:
            return
        for dep in sorted(graph[name]):
            visit(dep, [*path, name])
        done.add(name)

    for name in sorted(graph):
        visit(name, [])
    assert len(graph) > 40  # the whole package was read
