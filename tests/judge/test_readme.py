"""The README's Python example ("In Python") runs as written on the embedded judge and prints
what the README shows below it (``...`` for any text, as in the docs' blocks).

Its python blocks are read as the docs' are (``testkit/doc_blocks.py``); the README shows the
first one's output in the fence after a line that starts with "prints"."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest
from doc_blocks import blocks, printed_matches

from ragrecall import JudgeModelError
from ragrecall.judges import resolve_model

README = Path(__file__).resolve().parents[2] / "README.md"


def shown_output(line: int) -> str:
    """What the README shows the block opened on ``line`` (1-based) prints: the fence after the
    block's end, with only blank lines and one line starting "prints" between."""
    lines = README.read_text(encoding="utf-8").splitlines()
    end = next(j for j in range(line, len(lines)) if lines[j].strip() == "```")
    between = []
    start = end + 1
    while start < len(lines) and not lines[start].startswith("```"):
        between.append(lines[start].strip())
        start += 1
    prose = [text for text in between if text]
    assert len(prose) == 1 and prose[0].startswith("prints"), (README, line, between)
    assert lines[start].strip() in ("```", "```text"), (README, start + 1)
    close = next(j for j in range(start + 1, len(lines)) if lines[j].strip() == "```")
    return "\n".join(lines[start + 1 : close])


def test_the_readme_example_is_its_first_python_block() -> None:
    (first, *_) = blocks(README)
    assert "ContextRecall()" in first.code and first.skip is None
    assert shown_output(first.line).startswith("0.5 ")


def test_the_readme_example_prints_what_it_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    try:
        resolve_model()
    except JudgeModelError as exc:
        pytest.skip(f"no judge model: {exc}")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAGRECALL_CLAIMS_STORE", str(tmp_path / "claims.sqlite"))  # no claims kept
    (first, *_) = blocks(README)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(first.code, f"README.md:{first.line}", "exec"), {"__name__": "__readme__"})
    expected = shown_output(first.line)
    assert printed_matches(expected, printed.getvalue()), (
        f"README.md:{first.line} printed:\n{printed.getvalue()}\nthe README shows:\n{expected}"
    )
