"""The core's tests use the public API: at most 10 test files import private code (a module of
ragrecall whose path has a part starting with ``_``, at the top or inside a function), each
saying why on a comment line with the word "private" just above its first private import."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[2]
MOST = 10
ABOVE = 3  # lines above the first private import that may hold the reason


def _private(module: str) -> bool:
    parts = module.split(".")
    return parts[0] == "ragrecall" and any(p.startswith("_") for p in parts[1:])


def first_private_import(path: Path) -> int | None:
    """The line of the file's first import of private ragrecall code; None if it has none."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [f"{node.module}.{alias.name}" for alias in node.names]
            modules = [node.module] + (names if node.module == "ragrecall" else [])
        else:
            continue
        if any(_private(m) for m in modules if m != "ragrecall.__version__"):
            lines.append(node.lineno)
    return min(lines, default=None)


def private_importers() -> dict[Path, int]:
    found = {p: first_private_import(p) for p in sorted(TESTS.rglob("*.py"))}
    return {p: line for p, line in found.items() if line is not None}


def test_the_finder_sees_private_imports_and_only_those(tmp_path: Path) -> None:
    cases = {
        "from ragrecall._metrics.claims.structure import Unit\n": 1,
        "import ragrecall._judge.local as local\n": 1,
        "from ragrecall.cli._inputs import parse_column_map\n": 1,
        "from ragrecall import _api\n": 1,
        "def f():\n    from ragrecall._judge.retry import is_transient\n": 2,
        "import ragrecall\nfrom ragrecall import __version__, evaluate\n": None,
        "from ragrecall.engines import Record\nx = 'ragrecall._core'\n": None,
    }
    for n, (code, line) in enumerate(cases.items()):
        path = tmp_path / f"case{n}.py"
        path.write_text(code, encoding="utf-8")
        assert first_private_import(path) == line, code


def test_at_most_ten_test_files_import_private_code() -> None:
    found = private_importers()
    assert len(found) <= MOST, sorted(str(p.relative_to(TESTS)) for p in found)


def test_each_says_why_just_above_its_first_private_import() -> None:
    unsaid = []
    for path, line in private_importers().items():
        above = path.read_text(encoding="utf-8").splitlines()[max(0, line - 1 - ABOVE) : line - 1]
        if not any(s.lstrip().startswith("#") and "private" in s for s in above):
            unsaid.append(f"{path.relative_to(TESTS)}:{line}")
    assert unsaid == []
