"""``ragrecall watch``: exit 0 on a flat log, 1 on a drop, 2 on bad usage or input; --json and
--report."""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from ragrecall import RecallResult, Sample
from ragrecall.cli import main
from ragrecall.engines import Record

START = datetime(2026, 3, 1, tzinfo=timezone.utc)


def write_log(path: Path, means: list[float], per: int = 80, times: bool = True) -> Path:
    rng = random.Random(1)
    lines = []
    for w, mean in enumerate(means):
        for i in range(per):
            score = min(1.0, max(0.0, round(rng.random() + mean - 0.5, 1)))
            sample = Sample(user_input=f"q{w}-{i}", reference="r.", retrieved_contexts=["c"])
            result = RecallResult(metric="context_recall", score=score, status="scored")
            when = START + timedelta(hours=w, seconds=i) if times else None
            record = Record(sample.key(), i, sample, {"context_recall": result}, timestamp=when)
            lines.append(record.to_json() + "\n")
    path.write_text("".join(lines), "utf-8")
    return path


def test_a_flat_log_exits_0_and_a_drop_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flat = write_log(tmp_path / "flat.jsonl", [0.7] * 10)
    assert main(["watch", str(flat), "--window", "1h", "--baseline", "first:4"]) == 0
    out = capsys.readouterr().out
    assert "no drop flagged" in out and "false-alarm rate 5% per log" in out
    drop = write_log(tmp_path / "drop.jsonl", [0.7] * 5 + [0.45] * 5)
    page = tmp_path / "watch.html"
    argv = ["watch", str(drop), "--window", "1h", "--report", str(page)]
    assert main(argv) == 1
    assert "drop flagged" in capsys.readouterr().out
    html = page.read_text("utf-8")
    assert 'class="timeseries"' in html and 'class="alarm" data-window="5"' in html


def test_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    drop = write_log(tmp_path / "drop.jsonl", [0.7] * 5 + [0.45] * 5)
    assert main(["watch", str(drop), "--window", "1h", "--json"]) == 1
    value = json.loads(capsys.readouterr().out)
    assert value["flagged"] and value["alarms"][0]["window"] == 5
    assert len(value["metrics"]["context_recall"]["windows"]) == 10


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--window", "soon"], "a window is a whole number"),
        (["--metric", "nope"], "no record holds metric 'nope'"),
        (["--baseline", "last:3"], "--baseline is first:N"),
        (["--baseline-from", "2026-03-01"], "go together"),
        (["--baseline-from", "yesterday", "--baseline-to", "2026-03-02"], "ISO time"),
    ],
)
def test_usage_errors_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    path = write_log(tmp_path / "log.jsonl", [0.7] * 6)
    assert main(["watch", str(path), *extra]) == 2
    assert message in capsys.readouterr().out


def test_a_file_without_times_exits_2_or_windows_by_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_log(tmp_path / "old.jsonl", [0.7] * 6, times=False)
    assert main(["watch", str(path), "--window", "1h"]) == 2
    assert "old.jsonl:1: no timestamp" in capsys.readouterr().out
    assert main(["watch", str(path), "--window-records", "80", "--baseline", "first:2"]) == 0


def test_a_missing_or_bad_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["watch", str(tmp_path / "none.jsonl")]) == 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"not": "a record"}\n', "utf-8")
    assert main(["watch", str(bad)]) == 2
    assert "bad.jsonl" in capsys.readouterr().out
