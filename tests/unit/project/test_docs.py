"""The documentation's ```python blocks run, page by page, as the notebooks do.

Each page's blocks run in order in one namespace, in a temporary folder that holds a small
`data.jsonl`, with the user cache redirected there. A block that cannot run here (the embedded
judge, a provider's key, a vector store of yours) carries a marker on the line before it:

    <!-- skip: needs the embedded judge -->

Nothing stops running silently: every page under docs/ is collected, each page's counts of
blocks run and blocks skipped are pinned below, and the skipped blocks are exactly the marked
ones (a marker that precedes no python block is an error too). The blocks marked as needing the
embedded judge run in the judge tier (tests/judge/test_docs_judge.py), with the rest of their
page. The LangChain page's ``langsmith.evaluate`` runs against a fake LangSmith API on loopback
(``testkit/langsmith_server.py``). The pages' blocks, their pinned counts and the runner:
``testkit/doc_blocks.py``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from doc_blocks import DOCS, EXPECTED, PAGES, REASONS, blocks, printed_matches, run_blocks


def test_every_page_is_pinned() -> None:
    assert sorted(EXPECTED) == [p for p in PAGES if blocks(DOCS / p)]


def test_printed_output_is_matched_exactly_but_for_the_ellipsis() -> None:
    assert printed_matches("0.67 True\n", "0.67 True\n\n")
    assert not printed_matches("0.67 True", "0.68 True")
    assert printed_matches("{'context_recall': 0.666...}", "{'context_recall': 0.6666666666666666}")
    assert not printed_matches("{'context_recall': 0.666...}", "{'context_recall': 1.0}")


def test_a_text_block_after_a_python_block_is_its_output() -> None:
    (first, *_) = blocks(DOCS / "integrations/llama-index.md")
    assert first.output is not None and first.output.startswith("0.67 True\n2/3 claims")
    page = blocks(DOCS / "integrations/langchain.md")
    (langsmith,) = [b for b in page if "langsmith.evaluate(" in b.code]
    assert langsmith.skip is None
    assert langsmith.output is not None and langsmith.output.startswith("Starting evaluation")


def test_skip_reasons_are_known() -> None:
    for page in PAGES:
        for block in blocks(DOCS / page):
            assert block.skip is None or block.skip in REASONS, (block.page, block.line)


@pytest.mark.parametrize("page", [p for p in PAGES if blocks(DOCS / p)])
def test_page_blocks_run(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the user cache (the embedded judge's model) is never touched here
    monkeypatch.setenv("RAGRECALL_CACHE_DIR", str(tmp_path / "cache"))
    page_blocks = blocks(DOCS / page)
    with mlflow_undone(monkeypatch):
        ran = run_blocks(page, tmp_path, monkeypatch, also=None)
    skipped = [b for b in page_blocks if b.skip is not None]
    assert ran + len(skipped) == len(page_blocks)
    assert (ran, len(skipped)) == EXPECTED[page]


@contextmanager
def mlflow_undone(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """What the MLflow page sets for the whole process (its tracking store in the temporary
    folder, LangChain autolog), undone after the page; no usage telemetry sent."""
    for name in ("MLFLOW_TRACKING_URI", "MLFLOW_EXPERIMENT_ID"):  # restored by monkeypatch
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")
    try:
        yield
    finally:
        mlflow = sys.modules.get("mlflow")
        if mlflow is not None:
            mlflow.langchain.autolog(disable=True)
            mlflow.set_tracking_uri(None)
