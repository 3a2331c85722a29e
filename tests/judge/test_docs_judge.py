"""The documentation's blocks marked as needing the embedded judge run on it, with the rest of
their page (``testkit/doc_blocks.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from doc_blocks import DOCS, EMBEDDED, EXPECTED, PAGES, blocks, run_blocks


@pytest.mark.parametrize(
    "page", [p for p in PAGES if any(b.skip == EMBEDDED for b in blocks(DOCS / p))]
)
def test_embedded_judge_blocks_run(
    page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The blocks skipped in the unit tier for the embedded judge run here, on it."""
    ran = run_blocks(page, tmp_path, monkeypatch, also=EMBEDDED)
    embedded = sum(b.skip == EMBEDDED for b in blocks(DOCS / page))
    assert ran == EXPECTED[page][0] + embedded
