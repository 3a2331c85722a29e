"""The benchmarks as a package: public names only, and every script answers ``--help``.

Each script runs as ``python -m benchmarks.<group>.<name>`` from the repository root; its heavy
imports come after the arguments are parsed, so ``--help`` is quick.
"""

from __future__ import annotations

import ast
import subprocess
import sys
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


# One interpreter runs every script as ``python -m`` would (``runpy`` as ``__main__``), with
# ``--help``: the heavy imports they share are paid once.
_HELP_ALL = """
import contextlib, io, runpy, sys
failed = []
for name in sys.argv[1:]:
    sys.argv = [name, "--help"]
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_module(name, run_name="__main__", alter_sys=True)
        failed.append(f"{name}: no exit")
    except SystemExit as e:
        if e.code not in (0, None) or "usage:" not in out.getvalue():
            failed.append(f"{name}: exit {e.code}: {out.getvalue()[-300:]}")
print("\\n".join(failed))
"""


def test_every_script_answers_help() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _HELP_ALL, *map(module, SCRIPTS)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert not out.stdout.strip(), out.stdout
