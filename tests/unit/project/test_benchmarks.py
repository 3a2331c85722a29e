"""The benchmarks as a package: public names only, and every script answers ``--help``.

Each script runs as ``python -m benchmarks.<group>.<name>`` from the repository root; its heavy
imports come after the arguments are parsed, so ``--help`` is quick.
"""

from __future__ import annotations

import ast
import os
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


def _sufficiency_row(n: int, sufficient: bool, ps: list[float]) -> dict[str, object]:
    subs = [
        {"q": f"q{i}", "answerable": p >= 0.5, "p": p, "verified": p >= 0.5}
        for i, p in enumerate(ps)
    ]
    return {
        "id": f"row-{n}",
        "source": "cast_answerability",
        "metric": "sufficiency",
        "sufficient": sufficient,
        "status": "scored",
        "score": sum(s["answerable"] for s in subs) / len(subs),
        "p_sufficient": sum(ps) / len(ps),
        "subs": subs,
        "seconds": 1.0,
    }


def test_sufficiency_runs_are_replayed_at_a_threshold_without_the_judge(tmp_path: Path) -> None:
    """``report --threshold`` and ``ppi --threshold`` re-decide a run's verdicts from its
    recorded P and checks (a file of a run at 0.5, no ``threshold`` field); a threshold below
    the run's is refused, since those answers were never checked."""
    import json

    rows = [_sufficiency_row(n, n % 2 == 0, [0.9, 0.8 if n % 2 == 0 else 0.6]) for n in range(12)]
    run = tmp_path / "run.jsonl"
    run.write_text("".join(json.dumps(r) + "\n" for r in rows))
    env = {**os.environ, "RAGRECALL_BENCH_DATA": str(tmp_path / "absent")}  # labels: the file's

    def bench(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", *args], cwd=ROOT, env=env, capture_output=True, text=True
        )

    plain = bench("benchmarks.quality.sufficiency", "report", str(run))
    replay = bench("benchmarks.quality.sufficiency", "report", "--threshold", "0.75", str(run))
    assert plain.returncode == replay.returncode == 0, plain.stderr + replay.stderr
    assert "balanced accuracy 0.500" in plain.stdout  # every row answered at 0.5
    assert "balanced accuracy 1.000" in replay.stdout  # 0.6 no longer answers at 0.75
    lower = bench("benchmarks.quality.sufficiency", "report", "--threshold", "0.3", str(run))
    assert lower.returncode != 0 and "cannot replay at 0.3" in lower.stderr
    ppi = bench(
        "benchmarks.quality.ppi", "--sufficiency", str(run), "--threshold", "0.75",
        "--labels", "6", "--draws", "5",
    )  # fmt: skip
    assert ppi.returncode == 0, ppi.stderr[-2000:]
    assert "suff binary" in ppi.stdout and "N = 12 scored rows" in ppi.stdout
