"""The benchmarks as a package: public names only, and every script answers ``--help``.

Each script runs as ``python -m benchmarks.<group>.<name>`` from the repository root; its heavy
imports come after the arguments are parsed, so ``--help`` is quick.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "benchmarks").is_dir())
BENCH = ROOT / "benchmarks"
SCRIPTS = sorted(
    p for p in BENCH.glob("*/*.py") if p.name != "__init__.py" and not p.name.startswith("_")
)

def module(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def private_imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found |= {n for n in names if n.startswith("ragrecall.") and "._" in n}
    return found


def test_the_scripts_are_found() -> None:
    groups = {p.parent.name for p in SCRIPTS}
    assert groups == {"quality", "security", "speed", "peers"}
    assert len(SCRIPTS) >= 20


def test_no_private_imports() -> None:
    """Public names only: ``ragrecall`` and its public modules."""
    for path in sorted(BENCH.rglob("*.py")):
        private = {n for n in private_imports(path) if not n.startswith("ragrecall._pytest_plugin")}
        assert not private, f"{path.relative_to(BENCH)} imports private code: {sorted(private)}"


def test_no_sys_path_changes() -> None:
    for path in sorted(BENCH.rglob("*.py")):
        assert "sys.path.insert" not in path.read_text(), path


def _help(path: Path) -> tuple[str, int, str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    out = subprocess.run(
        [sys.executable, "-m", module(path), "--help"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return module(path), out.returncode, out.stdout + out.stderr


def test_every_script_answers_help() -> None:
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        results = list(pool.map(_help, SCRIPTS))
    failed = [f"{name}: exit {rc}\n{text[-600:]}" for name, rc, text in results if rc != 0]
    assert not failed, "\n\n".join(failed)
    for name, _, text in results:
        assert "usage:" in text, name
