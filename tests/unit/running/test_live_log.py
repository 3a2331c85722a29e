"""A live log is a results file: a RecallLogger's JsonlSink read by compare and review."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from ragrecall import ClaimCache, ContextRecall, RecallLogger
from ragrecall.cli import main
from ragrecall.engines import read_records
from ragrecall.sinks import JsonlSink
from ragrecall.testing import ScriptedJudge

FACTS = [("Cats purr.", "Dogs bark."), ("Owls hoot.", "Cows moo."), ("Bees hum.", "Ducks quack.")]


def log(path: Path, chunks: int) -> Path:
    """Each question logged with its first ``chunks`` facts retrieved."""
    metric = ContextRecall(ScriptedJudge(), claims="sentences", cache=ClaimCache())
    with RecallLogger([metric], [JsonlSink(path)]) as logger:
        for i, facts in enumerate(FACTS):
            sample = {"question": f"q{i}", "reference": " ".join(facts), "contexts": facts}
            logger.submit({**sample, "contexts": list(facts[:chunks])}, run_id=f"run-{i}")
    return path


def test_compare_reads_two_live_logs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    both, one = log(tmp_path / "both.jsonl", 2), log(tmp_path / "one.jsonl", 1)
    assert [r.score("context_recall") for r in read_records(one)] == [0.5, 0.5, 0.5]
    capsys.readouterr()
    assert main(["compare", str(both), str(one)]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "3 pairs" in shown or "pairs 3" in shown, shown


def test_review_reads_a_live_log(tmp_path: Path) -> None:
    path = log(tmp_path / "live.jsonl", 1)
    folder = tmp_path / "review"
    assert main(["review", str(path), "--out", str(folder), "--random", "100"]) == 0
    with (folder / "review.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    claims = {row["claim"] for row in rows}
    assert {"Cats purr.", "Dogs bark.", "Owls hoot."} <= claims, claims
