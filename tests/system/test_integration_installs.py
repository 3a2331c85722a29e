"""Each integration page followed as written, in a fresh venv: its install line (``pip install
-e . -e integrations/NAME ...``, from the repository root; run by uv's pip, which takes the
same arguments, so the PyPI dependencies come from uv's cache on a repeat; every line of the
page's first bash block), then the page's
first python block run in that venv with ragrecall's scripted judge, and what it prints checked
against the page.

The Phoenix page's first block needs a Phoenix server (tests/system/test_docs_phoenix.py runs
it on one); here its first block that needs none runs, after the line that makes the judge."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import pytest
from doc_blocks import DOCS, PHOENIX, Block, blocks, printed_matches

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]
UV = ROOT / ".venv-uv" / "bin" / "uv"
PAGES = ["langchain.md", "llama-index.md", "mlflow.md", "phoenix.md"]
JUDGE = "from ragrecall.testing import ScriptedJudge\njudge = ScriptedJudge()\n"


def install_lines(page: str) -> list[list[str]]:
    """The arguments of each ``pip install`` line of the page's first ```bash block."""
    lines = (DOCS / "integrations" / page).read_text(encoding="utf-8").splitlines()
    start = lines.index("```bash")
    found = [
        shlex.split(line, comments=True) for line in lines[start + 1 : lines.index("```", start)]
    ]
    assert found and all(argv[:2] == ["pip", "install"] for argv in found), found
    return [argv[2:] for argv in found]


def first_block(page: str) -> tuple[Block, str]:
    """The page's first python block that runs without a server, and the code to run (with
    the judge made first where the block takes it from the one before)."""
    found = blocks(DOCS / "integrations" / page)
    if found[0].skip == PHOENIX:
        block = next(b for b in found if "judge=judge" in b.code and "client" not in b.code)
        return block, JUDGE + block.code
    return found[0], found[0].code


def run(argv: list[str | Path], **kwargs: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(a) for a in argv], capture_output=True, text=True, timeout=900, **kwargs
    )  # type: ignore[call-overload]
    assert done.returncode == 0, f"{argv}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done  # type: ignore[no-any-return]


@pytest.mark.parametrize("page", PAGES)
def test_the_pages_install_line_and_first_block_work_in_a_fresh_venv(
    page: str, tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    python = venv / "bin" / "python"
    run([UV, "venv", "--python", "3.11", venv])
    for argv in install_lines(page):
        run([UV, "pip", "install", "--python", python, *argv], cwd=ROOT)
    block, code = first_block(page)
    assert block.output is not None, f"{block.page}:{block.line} shows no output to check"
    work = tmp_path / "work"
    work.mkdir()
    (work / "block.py").write_text(code, encoding="utf-8")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON"))},
        "MLFLOW_DISABLE_TELEMETRY": "true",
        "RAGRECALL_CACHE_DIR": str(tmp_path / "cache"),
        "LANGSMITH_TRACING": "false",
    }
    done = run([python, "block.py"], cwd=work, env=env)
    assert printed_matches(block.output, done.stdout), (
        f"docs/{block.page}:{block.line} printed:\n{done.stdout}\nthe page shows:\n{block.output}"
    )
    # the adapter came from this checkout, editable
    where = run([python, "-c", "import ragrecall; print(ragrecall.__file__)"], env=env)
    assert where.stdout.strip() == str(ROOT / "src" / "ragrecall" / "__init__.py")
