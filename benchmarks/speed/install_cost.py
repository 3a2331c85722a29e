"""What installing ragrecall costs a user who never uses it in a test run, and on disk.

1. The pytest plugin: a one-test pytest run in a folder of its own, with the plugin and with
   ``-p no:ragrecall``, alternated ``--repeat`` times, and the plugin's own import time
   (``python -X importtime -c "import ragrecall._pytest_plugin"``, pytest already imported).
2. ``--sizes``: the venv of ``pip install ragrecall`` (the light install), of the same with
   llama.cpp's bindings (what it held before the ``[model]`` extra took them), and of
   ``ragrecall[model]``, from a wheel built from this checkout (uv installs, with bytecode
   compiled as pip does).

    python -m benchmarks.speed.install_cost --repeat 5 --sizes
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEST = "def test_one():\n    assert 1 + 1 == 2\n"


def pytest_run(folder: Path, *extra: str) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra, "test_one.py"],
        cwd=folder,
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - start


def own_import_ms() -> float:
    code = "import pytest; import ragrecall._pytest_plugin"
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True
    )
    total = 0
    for line in done.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+\d+ \|\s+(\S+)", line)
        if m and m.group(2).strip().startswith("ragrecall"):
            total += int(m.group(1))
    return total / 1000


def venv_mb(where: Path, *specs: str) -> float:
    uv = shutil.which("uv") or str(Path(sys.executable).with_name("uv"))
    venv = where / f"venv{len(list(where.glob('venv*')))}"
    subprocess.run([uv, "venv", "-q", venv], check=True)
    subprocess.run(
        [uv, "pip", "install", "-q", "--compile-bytecode", "--python", venv, *specs], check=True
    )
    size = sum(f.stat().st_size for f in venv.rglob("*") if f.is_file() and not f.is_symlink())
    return size / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sizes", action="store_true", help="also build and measure venvs")
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "test_one.py").write_text(TEST)
        (folder / "pytest.ini").write_text("[pytest]\n")
        pytest_run(folder)  # warm the file cache
        with_plugin, without = [], []
        for _ in range(args.repeat):
            with_plugin.append(pytest_run(folder))
            without.append(pytest_run(folder, "-p", "no:ragrecall"))
        print(
            f"one-test pytest run, median of {args.repeat}: with the plugin "
            f"{statistics.median(with_plugin):.2f} s, with -p no:ragrecall "
            f"{statistics.median(without):.2f} s"
        )
        print(f"the plugin's own import (ragrecall modules): {own_import_ms():.1f} ms")
        if args.sizes:
            subprocess.run(
                [sys.executable, "-m", "build", "-q", "--wheel", "--outdir", folder / "dist", ROOT],
                check=True,
                capture_output=True,
            )
            (wheel,) = (folder / "dist").glob("ragrecall-*.whl")
            installs = {
                "ragrecall": [str(wheel)],
                "ragrecall + xllamacpp (the plain install before the [model] extra took it)": [
                    str(wheel),
                    "xllamacpp",
                ],
                "ragrecall[model]": [f"{wheel}[model]"],
            }
            for name, specs in installs.items():
                print(f"venv of {name}: {venv_mb(folder, *specs):.0f} MB")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
