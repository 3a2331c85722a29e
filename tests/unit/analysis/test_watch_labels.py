"""``watch`` with people's labels of whole answers (``labels=``, ``ragrecall watch --labels``):
a generous judge (it finds about 9 of an answer's 10 claims supported where people find 6)
is corrected in each window holding at least 10 labelled answers; a window with fewer keeps
the judge's mean and says so (method ``t``, no labels; "judge's (< 10 labels)" in the
table and on the page); a bad labels file exits 2 naming it.

The labels are what the review page exports (``ragrecall review --answers``), one line per
claim, as ``ragrecall eval --labels`` reads them."""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from ragrecall import RecallResult, Sample, SampleError
from ragrecall.cli import main
from ragrecall.engines import Record
from ragrecall.sinks import watch
from ragrecall.text import claim_set_hash

START = datetime(2026, 3, 1, tzinfo=timezone.utc)
CLAIMS = 10  # claims per answer
PER = 40  # answers per hourly window
LABELLED = [12, 12, 12, 12, 12, 5]  # labelled answers per window: the last one too few
METRIC = "context_recall"


def answer(w: int, i: int, rng: random.Random) -> tuple[Record, int]:
    """A logged answer of window ``w`` the judge scores 0.8 to 1.0, and how many of its
    claims people find supported (three fewer, give or take one)."""
    sample = Sample(user_input=f"q{w}-{i}?", reference="r.", retrieved_contexts=[f"c{w}-{i}"])
    claims = [f"claim {k} of answer {w}-{i}." for k in range(CLAIMS)]
    judged = rng.choice([8, 9, 9, 10])
    result = RecallResult(
        metric=METRIC, score=judged / CLAIMS, status="scored", claims=claims,
        claim_set=claim_set_hash(claims),
    )  # fmt: skip
    when = START + timedelta(hours=w, seconds=60 * i)
    record = Record(
        sample.key(), i, sample, {METRIC: result}, content=sample.content_key(), timestamp=when
    )
    return record, judged - 3 + rng.choice([-1, 0, 0, 1])


def label_lines(record: Record, supported: int) -> list[dict[str, Any]]:
    """Every claim of ``record`` labelled (the first ``supported`` supported), as the review
    page exports a whole answer."""
    result = record.results[METRIC]
    same = {
        "key": record.key, "occurrence": record.occurrence, "content": record.content,
        "answer_claims": len(result.claims), "claim_set": result.claim_set, "pick": "answer",
        "metric": METRIC, "judge_score": result.score,
        "human_recall": supported / len(result.claims),
    }  # fmt: skip
    return [
        {
            **same,
            "claim": claim,
            "claim_index": k,
            "label": "supported" if k < supported else "not_supported",
        }
        for k, claim in enumerate(result.claims)
    ]


@pytest.fixture
def logged(tmp_path: Path) -> tuple[Path, Path, list[float]]:
    """The log (six clock hours of ``PER`` answers), the labels file of the first
    ``LABELLED[w]`` answers of each window ``w``, and people's mean of each window's."""
    rng = random.Random(3)
    records: list[Record] = []
    labels: list[dict[str, Any]] = []
    people: list[float] = []
    for w, count in enumerate(LABELLED):
        said = []
        for i in range(PER):
            record, supported = answer(w, i, rng)
            records.append(record)
            if i < count:
                labels += label_lines(record, supported)
                said.append(supported / CLAIMS)
        people.append(sum(said) / len(said))
    log = tmp_path / "recall.jsonl"
    log.write_text("".join(r.to_json() + "\n" for r in records), "utf-8")
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in labels), "utf-8")
    return log, path, people


def test_windows_with_ten_labelled_answers_are_corrected_toward_people(
    logged: tuple[Path, Path, list[float]],
) -> None:
    log, labels, people = logged
    judged = watch(log, window="1h", baseline=3).windows[METRIC]
    assert all(w.estimate is not None and w.estimate.method == "t" for w in judged)
    seen = watch(log, window="1h", baseline=3, labels=labels)
    windows = seen.windows[METRIC]
    assert len(windows) == len(LABELLED)
    for w, before, human, count in zip(windows, judged, people, LABELLED, strict=True):
        e = w.estimate
        assert e is not None and w.judge == pytest.approx(before.judge)
        assert w.judge is not None and w.judge > 0.85  # the judge: about 0.9
        if count >= 10:  # corrected: the mean moves from the judge's toward people's
            assert (e.method, e.labels) == ("ppi", count)
            assert abs(e.mean - human) < abs(w.judge - human) / 3
            assert e.mean < w.judge - 0.2 and e.low <= e.mean <= e.high
        else:  # too few labels: the judge's mean and its t interval, unchanged
            assert (e.method, e.labels) == ("t", 0)
            assert before.estimate is not None and e == before.estimate
    base = seen.baseline[METRIC]
    assert base is not None and (base.method, base.labels) == ("ppi", 36)
    assert abs(base.mean - sum(people[:3]) / 3) < 0.05
    assert not seen.flagged  # people's view and the judge's agree: no drop either way


def test_the_command_line_reports_the_corrected_windows(
    logged: tuple[Path, Path, list[float]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # the table's rows unwrapped
    log, labels, people = logged
    argv = ["watch", str(log), "--window", "1h", "--baseline", "first:3", "--labels", str(labels)]
    assert main([*argv, "--json"]) == 0
    value = json.loads(capsys.readouterr().out)
    windows = value["metrics"][METRIC]["windows"]
    assert [w["estimate"]["method"] for w in windows] == ["ppi"] * 5 + ["t"]
    assert [w["estimate"]["labels"] for w in windows] == [12] * 5 + [0]
    for w, human in zip(windows[:5], people, strict=False):
        assert abs(w["estimate"]["mean"] - human) < abs(w["judge_mean"] - human) / 3
    last = windows[-1]
    assert last["estimate"]["mean"] == pytest.approx(last["judge_mean"])
    assert value["metrics"][METRIC]["baseline"]["method"] == "ppi"
    page = log.parent / "watch.html"
    assert main([*argv, "--report", str(page)]) == 0
    out = capsys.readouterr().out
    assert "corrected by labels" in out and "no drop flagged" in out
    rows = [line for line in out.splitlines() if "2026-03-01" in line]
    assert len(rows) == 6 and all("corrected (12 labels)" in row for row in rows[:5])
    assert "judge's (< 10 labels)" in rows[5]
    html = page.read_text("utf-8")
    assert html.count("corrected (12 labels)</td>") == 5
    assert html.count("judge&#x27;s (&lt; 10 labels)</td>") == 1
    assert main([*argv[:-2]]) == 0  # without labels, no window says either
    out = capsys.readouterr().out
    assert "labels)" not in out and "corrected" not in out


def test_a_bad_labels_file_exits_2_naming_it(
    logged: tuple[Path, Path, list[float]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log, labels, _ = logged
    lines = labels.read_text("utf-8").splitlines()
    broken = tmp_path / "broken-labels.jsonl"
    broken.write_text("\n".join([*lines[:3], "{not json", *lines[3:]]) + "\n", "utf-8")
    incomplete = tmp_path / "incomplete-labels.jsonl"
    incomplete.write_text("\n".join(lines[1:]) + "\n", "utf-8")  # a claim of an answer left out
    missing = tmp_path / "missing-labels.jsonl"
    error: type[Exception]
    for path, message, error in [
        (broken, "broken-labels.jsonl:4", SampleError),
        (incomplete, "incomplete-labels.jsonl:1: an incomplete answer", SampleError),
        (missing, "missing-labels.jsonl", FileNotFoundError),
    ]:
        argv = ["watch", str(log), "--window", "1h", "--baseline", "first:3"]
        assert main([*argv, "--labels", str(path)]) == 2
        out = capsys.readouterr().out
        assert "error:" in out and message in out.replace("\n", ""), out
        with pytest.raises(error, match=message):
            watch(log, window="1h", baseline=3, labels=path)
