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


def _unit(module: str) -> str:
    """A module's unit: the top-level module or subpackage of ragrecall it belongs to."""
    parts = module.split(".")
    return ".".join(parts[:2])


# What sits below what: a unit never imports one of the units it is listed against (the
# metrics are driven by the engines and the calibration, never the other way round).
BELOW = {
    "ragrecall._metrics": [
        "ragrecall._calibration",
        "ragrecall._evaluate",
        "ragrecall._engines",
        "ragrecall._batch",
        "ragrecall._results_file",
        "ragrecall.cli",
        "ragrecall.ray",
        "ragrecall.engines",
    ],
    "ragrecall._judge": ["ragrecall._metrics", "ragrecall._engines", "ragrecall._evaluate"],
    "ragrecall._engines": ["ragrecall._evaluate", "ragrecall._batch", "ragrecall.ray"],
    "ragrecall._budget": ["ragrecall"],  # imports nothing of ragrecall: it travels to Ray
}


def test_no_upward_import() -> None:
    """No unit (a top-level module or subpackage) imports one that imports it back, however
    indirectly (a module under ``_metrics`` importing a top-level module that imports
    ``_metrics``: an upward import); and the layers above hold."""
    units: dict[str, set[str]] = {}
    for name, deps in _graph().items():
        if name == "ragrecall":  # the lazy facade: it imports only for type checkers
            continue
        for dep in deps:
            if dep != "ragrecall" and _unit(dep) != _unit(name):
                units.setdefault(_unit(name), set()).add(_unit(dep))
    done: set[str] = set()

    def visit(unit: str, path: list[str]) -> None:
        assert unit not in path, "upward import: " + " -> ".join([*path[path.index(unit) :], unit])
        if unit in done:
            return
        for dep in sorted(units.get(unit, ())):
            visit(dep, [*path, unit])
        done.add(unit)

    for unit in sorted(units):
        visit(unit, [])
    for unit, above in BELOW.items():
        reached = units.get(unit, set())
        if unit == "ragrecall._budget":
            assert not reached, f"{unit} imports {sorted(reached)}"
            continue
        wrong = sorted(reached & set(above))
        assert not wrong, f"{unit} imports {wrong}, which sit above it"
