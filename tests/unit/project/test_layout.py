"""The house's shape: the private groups of ``src/ragrecall`` sit in an order, each importing
only the groups below it; no private module imports a public face; no module imports one
that imports it back (not even inside a function or for types)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import ragrecall

ROOT = Path(ragrecall.__file__).parent

# The groups from the bottom up: a group imports only groups of a lower rank (and itself).
RANK = {
    "_core": 0,  # what a sample and a result are; imports nothing else of ragrecall
    "_stats": 0,  # the maths; imports nothing of ragrecall
    "_io": 1,
    "_judge": 2,  # with the embedded judge, local/
    "_metrics": 3,
    "_running": 4,
    "_analysis": 5,
    "_generate": 5,
    "_report": 6,
}
# Everything else is a face: __init__, _api, the public modules, cli/, ray/, the pytest plugin.
ALONE = {"ragrecall._stats", "ragrecall._running.budget"}  # import nothing of ragrecall


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
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[: len(package) - node.level + 1]
                    target = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    target = node.module or ""
                candidates = (*(f"{target}.{a.name}" for a in node.names), target)
            elif isinstance(node, ast.Import):
                candidates = tuple(a.name for a in node.names)
            else:
                continue
            for candidate in candidates:
                if candidate in modules and candidate != name:
                    deps.add(candidate)
                    break
        graph[name] = deps
    return graph


def _group(module: str) -> str | None:
    """A private module's group, or None for a face."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in RANK else None


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
    assert len(graph) > 100  # the whole package was read


def test_groups_import_only_below() -> None:
    wrong = []
    for name, deps in sorted(_graph().items()):
        group = _group(name)
        if group is None:
            continue
        for dep in sorted(deps):
            below = _group(dep)
            if below is None:
                wrong.append(f"{name} imports the face {dep}")
            elif below != group and RANK[below] >= RANK[group]:
                wrong.append(f"{name} ({group}) imports {dep} ({below}), not below it")
    assert not wrong, "\n".join(wrong)


def test_alone_modules_import_nothing_of_ragrecall() -> None:
    graph = _graph()
    for name, deps in graph.items():
        if any(name == a or name.startswith(f"{a}.") for a in ALONE):
            outside = [d for d in deps if not any(d.startswith(a) for a in ALONE)]
            assert not outside, f"{name} imports {outside}"


def test_top_level_is_faces() -> None:
    """The top of the package holds the public faces, the API module and the pytest plugin;
    everything else lives in a group."""
    files = sorted(p.name for p in ROOT.glob("*.py"))
    private = [f for f in files if f.startswith("_") and f != "__init__.py"]
    assert len(files) <= 14, files
    assert private == ["_api.py", "_pytest_plugin.py"], private


# The public submodules that are lazy tables (``_EXPORTS``: name -> the module defining it).
FACES = ["adapters", "calibration", "engines", "judges", "prompts", "sinks", "stats", "testing"]
FACES += ["text"]


@pytest.mark.parametrize("face", FACES)
def test_each_face_draws_from_at_most_two_groups(face: str) -> None:
    """A face lists names from one or two homes, each a module of a private group."""
    exports: dict[str, str] = importlib.import_module(f"ragrecall.{face}")._EXPORTS
    groups = {_group(source) for source in exports.values()}
    assert None not in groups, f"ragrecall.{face} draws a name from a face"
    assert len(groups) <= 2, f"ragrecall.{face} draws from {sorted(map(str, groups))}"


def test_no_private_module_imports_a_face() -> None:
    graph = _graph()
    wrong = [
        f"{name} imports {dep}"
        for name, deps in sorted(graph.items())
        if _group(name) is not None
        for dep in sorted(deps)
        if _group(dep) is None
    ]
    assert not wrong, "\n".join(wrong)


def test_long_modules_say_their_one_concern() -> None:
    """A module over 300 lines holds one concern and says so near its top; a logic module
    stays at most 370 lines (prompt and rule tables, which say they are data, may be longer)."""
    roots = [ROOT, ROOT.parents[1] / "integrations"]
    wrong = []
    for root in roots:
        for path in root.rglob("*.py"):
            if "tests" in path.parts:
                continue
            lines = path.read_text().splitlines()
            head = "\n".join(lines[:30]).lower()
            if len(lines) > 300 and "one concern" not in head:
                wrong.append(f"{path}: {len(lines)} lines and no one-concern note")
            elif len(lines) > 370 and "data" not in head:
                wrong.append(f"{path}: {len(lines)} lines of logic")
    assert not wrong, "\n".join(wrong)
