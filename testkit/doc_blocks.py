"""The documentation's ```python blocks, page by page: how they are found and marked, the
pinned counts of each page, and running a page's blocks in one namespace (for
tests/unit/project/test_docs.py and, with the embedded judge, tests/judge/test_docs_judge.py);
a page that calls LangSmith's API runs against a fake of it on loopback (``LANGSMITH``).

A ```text block right after a python block (blank lines between at most) is what that block
prints: the runner checks it, exactly, except that ``...`` stands for any text (for numbers that
vary, or long lines the page shortens)."""

from __future__ import annotations

import contextlib
import io
import json
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
from langsmith_server import serving as langsmith_serving

DOCS = Path(__file__).resolve().parents[1] / "docs"

# page: (blocks run, blocks skipped by marker). A change to a page's blocks changes these.
EXPECTED: dict[str, tuple[int, int]] = {
    "calibration.md": (4, 0),
    "cli.md": (1, 0),
    "compare.md": (1, 0),
    "generate.md": (1, 1),
    "getting-started.md": (3, 1),
    "integrations/langchain.md": (6, 0),
    "integrations/llama-index.md": (3, 0),
    "integrations/mlflow.md": (2, 0),
    "integrations/phoenix.md": (0, 3),
    "judges.md": (3, 0),
    "metrics/chunk-recall.md": (0, 1),
    "metrics/context-precision.md": (1, 1),
    "metrics/context-recall.md": (2, 0),
    "metrics/index.md": (2, 0),
    "metrics/question-recall.md": (1, 1),
    "metrics/sufficiency.md": (4, 0),
    "metrics/recall-precision.md": (0, 1),
    "metrics/response-recall.md": (1, 0),
    "metrics/retrieval-recall.md": (1, 0),
    "results.md": (3, 0),
    "scaling.md": (1, 3),
    "security.md": (3, 0),
    "testing.md": (1, 1),
    "traces.md": (0, 1),
}

_FENCE = re.compile(r"^```(\w*)\s*$")
_SKIP = re.compile(r"^<!-- skip: (.+?) -->$")
EMBEDDED = "needs the embedded judge"  # these run in the judge tier, on it
PHOENIX = "needs a Phoenix server: tests/system/test_docs_phoenix.py"  # runs them on one
REASONS = (
    EMBEDDED,
    "needs a provider's API key",
    "needs your own objects",
    "needs a server",
    "needs a Ray cluster",
    "needs a trace export",
    "a pytest test",
    PHOENIX,
)


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    code: str
    skip: str | None
    output: str | None = None  # what the block prints, from the ```text block after it


def blocks(path: Path) -> list[Block]:
    """The page's python blocks, each with the skip marker on the line before it, if any (a
    page outside docs/, such as the README, is named by its file name)."""
    page = path.relative_to(DOCS).as_posix() if path.is_relative_to(DOCS) else path.name
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    marker: tuple[int, str] | None = None  # (line index, reason) of a marker not yet used
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        skip, fence = _SKIP.match(stripped), _FENCE.match(stripped)
        if marker is not None and not fence:
            where = f"{page}:{marker[0] + 1}"
            raise AssertionError(f"{where}: a skip marker not on the line before a block")
        if skip:
            marker = (i, skip.group(1))
        elif fence:
            end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
            if fence.group(1) == "python":
                code = textwrap.dedent("\n".join(lines[i + 1 : end]))
                output, end = _output_after(lines, end)
                found.append(Block(page, i + 1, code, marker[1] if marker else None, output))
            elif marker is not None:
                raise AssertionError(
                    f"{page}:{marker[0] + 1}: a skip marker before a non-python block"
                )
            marker = None
            i = end
        i += 1
    assert marker is None, f"{page}: a skip marker at the end of the page"
    return found


def _output_after(lines: list[str], end: int) -> tuple[str | None, int]:
    """The ```text block that follows line ``end`` (blank lines between at most), and where
    it ends; or None and ``end``."""
    start = end + 1
    while start < len(lines) and not lines[start].strip():
        start += 1
    if start == len(lines) or lines[start].strip() != "```text":
        return None, end
    close = next(j for j in range(start + 1, len(lines)) if lines[j].strip() == "```")
    return textwrap.dedent("\n".join(lines[start + 1 : close])), close


def printed_matches(expected: str, printed: str) -> bool:
    """Whether ``printed`` is ``expected``, where ``...`` in ``expected`` stands for any text
    (trailing blank lines and spaces at line ends aside)."""
    expected, printed = (
        "\n".join(line.rstrip() for line in text.strip("\n").splitlines())
        for text in (expected, printed)
    )
    pattern = ".*?".join(re.escape(part) for part in expected.split("..."))
    return re.fullmatch(pattern, printed, re.DOTALL) is not None


# pages whose blocks call LangSmith's API: they run against a fake of it on loopback
# (testkit/langsmith_server.py), with LANGSMITH_ENDPOINT and a dummy key set for the page
LANGSMITH = ("integrations/langchain.md",)

PAGES = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))

SAMPLES = [
    {
        "sample_id": "eiffel",
        "user_input": "When was the Eiffel Tower completed, and how tall is it?",
        "reference": "The Eiffel Tower was completed in 1889. It is 330 metres tall.",
        "retrieved_contexts": [
            {"id": "d1", "text": "The Eiffel Tower in Paris was completed in 1889."},
            {"id": "d2", "text": "Paris is the capital of France."},
        ],
        "reference_ids": ["d1", "d3"],
    },
    {
        "sample_id": "python",
        "user_input": "Who created Python?",
        "reference": "Guido van Rossum created Python.",
        "retrieved_contexts": [{"id": "d4", "text": "Guido van Rossum created Python."}],
        "reference_ids": ["d4"],
    },
]


def run_blocks(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, also: str | None) -> int:
    """Run the page's blocks in order in one namespace, the unmarked ones and those marked
    ``also``; return how many ran."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAGRECALL_CLAIMS_STORE", str(tmp_path / "claims.sqlite"))
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(s) + "\n" for s in SAMPLES))
    namespace: dict[str, object] = {"__name__": "__docs__"}
    with langsmith_serving() if page in LANGSMITH else contextlib.nullcontext() as langsmith:
        ran = _run(page, namespace, also)
    if langsmith is not None:  # the page's client reached the fake, and asked nothing more
        assert langsmith.runs and not langsmith.unknown, (page, langsmith.unknown)
    return ran


def _run(page: str, namespace: dict[str, object], also: str | None) -> int:
    ran = 0
    for block in blocks(DOCS / page):
        if block.skip is not None and block.skip != also:
            continue
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                exec(compile(block.code, f"docs/{page}:{block.line}", "exec"), namespace)
        except Exception as error:
            raise AssertionError(f"docs/{page}:{block.line}: {error!r}") from error
        if block.output is not None and not printed_matches(block.output, printed.getvalue()):
            raise AssertionError(
                f"docs/{page}:{block.line} printed:\n{printed.getvalue()}\n"
                f"the page shows:\n{block.output}"
            )
        ran += 1
    return ran
