"""``ragrecall.sinks.watch``: windows, the drop test, labels, and what cannot be watched."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from ragrecall import RecallResult, Sample, SampleError
from ragrecall.engines import Record
from ragrecall.sinks import watch

START = datetime(2026, 3, 1, tzinfo=timezone.utc)


def record(i: int, score: float | None, when: datetime | None) -> Record:
    sample = Sample(user_input=f"q{i}", reference=f"r{i}.", retrieved_contexts=["c"])
    result = RecallResult(
        metric="context_recall",
        score=score,
        status="scored" if score is not None else "unscorable",
        reason="" if score is not None else "judge failed",
    )
    return Record(sample.key(), i, sample, {"context_recall": result}, timestamp=when)


def log(means: list[float], per: int = 80, seed: int = 0) -> list[Record]:
    """Hourly windows of ``per`` records, 0 / 0.5 / 1 scores around each window's mean."""
    rng = random.Random(seed)
    out = []
    for w, mean in enumerate(means):
        for i in range(per):
            score = min(1.0, max(0.0, round(rng.random() + mean - 0.5, 1)))
            out.append(record(len(out), score, START + timedelta(hours=w, seconds=i)))
    return out


def test_windows_are_clock_hours_with_counts_and_intervals() -> None:
    records = log([0.7] * 8)
    records.append(record(999, None, START + timedelta(hours=7, minutes=59)))
    seen = watch(records, window="1h", baseline=3)
    windows = seen.windows["context_recall"]
    assert [w.start for w in windows] == [START + timedelta(hours=h) for h in range(8)]
    assert [w.baseline for w in windows] == [True] * 3 + [False] * 5
    assert [w.scored for w in windows] == [80] * 8 and windows[-1].unscorable == 1
    for w in windows:
        assert w.estimate is not None and w.estimate.low < w.estimate.mean < w.estimate.high
    assert seen.baseline_windows == [0, 1, 2] and seen.watched == 5
    assert "false-alarm rate 5% per log of up to 5 watched windows" in seen.statement()


def test_a_flat_log_raises_no_alarm_and_a_drop_does() -> None:
    assert not watch(log([0.7] * 12), window="1h", baseline=4).flagged
    seen = watch(log([0.7] * 6 + [0.45] * 6), window="1h", baseline=4)
    assert seen.flagged and seen.alarms[0].window == 6
    assert seen.alarms[0].drop == pytest.approx(0.25, abs=0.08)
    assert all(a.p_value < a.level for a in seen.alarms)
    assert seen.alarms[0].level == pytest.approx(0.05 / seen.tests)


def test_empty_windows_between_are_kept_and_not_tested() -> None:
    records = [r for r in log([0.7] * 6) if not START + timedelta(hours=4) <= r.timestamp]  # type: ignore[operator]
    records += [record(500 + i, 0.7, START + timedelta(hours=8, seconds=i)) for i in range(40)]
    windows = watch(records, window="1h", baseline=2).windows["context_recall"]
    assert len(windows) == 9 and windows[5].scored == 0 and windows[5].estimate is None


def test_windows_of_records_for_files_without_times(tmp_path: Path) -> None:
    records = [record(i, 0.5, None) for i in range(100)]
    path = tmp_path / "old.jsonl"
    path.write_text("".join(r.to_json() + "\n" for r in records), "utf-8")
    with pytest.raises(SampleError, match=r"old.jsonl:1: no timestamp .*--window-records"):
        watch(path, window="1h")
    seen = watch(path, window=20, baseline=2)
    assert len(seen.windows["context_recall"]) == 5 and seen.window == "20 records"


def test_every_line_of_a_log_counts(tmp_path: Path) -> None:
    same = [record(0, 0.5, START + timedelta(minutes=m)) for m in range(30)]  # one query, 30x
    path = tmp_path / "log.jsonl"
    path.write_text("".join(r.to_json() + "\n" for r in same), "utf-8")
    seen = watch(path, window="10m", baseline=1)
    assert [w.scored for w in seen.windows["context_recall"]] == [10, 10, 10]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"window": "1x"}, "a window is a whole number and a unit"),
        ({"window": "0h"}, "a window is a whole number"),
        ({"metrics": ["nope"]}, "no record holds metric 'nope'"),
        ({"baseline": 30}, "all in the baseline"),
        ({"false_alarm": 1.5}, "must be in"),
    ],
)
def test_bad_input_is_a_clear_error(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(SampleError, match=message):
        watch(log([0.7] * 4), **kwargs)  # type: ignore[arg-type]


def test_an_empty_log_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("", "utf-8")
    with pytest.raises(SampleError, match=r"empty\.jsonl holds no records"):
        watch(path)


def test_a_baseline_of_times() -> None:
    seen = watch(log([0.7] * 6), window="1h", baseline=(START, START + timedelta(hours=2)))
    assert seen.baseline_windows == [0, 1] and seen.watched == 4
