"""The pages in a real headless Chromium (.ci/run installs Debian's chromium; elsewhere:
apt-get install chromium): the report renders with nothing blocked, and a person labels
claims (then `calibrate`) and whole answers (then `eval --labels`) with key presses.

The results come from `ragrecall eval --out` with ``fakes:LogprobJudge`` on ``animals.rows``,
as in tests/unit/analysis/test_review.py and test_labels.py."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from animals import rows, truth
from cdp import Browser
from hostile_records import hostile_record

from ragrecall.calibration import CalibrationProfile, read_labels
from ragrecall.cli import main
from ragrecall.engines import Record, read_records
from ragrecall.prompts import PROMPT_VERSION

JUDGE = ["--judge-factory", "fakes:LogprobJudge", "--strategy", "per_claim"]


@pytest.fixture
def results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``ragrecall eval`` of 30 rows (data.jsonl) into results.jsonl."""
    monkeypatch.setenv("RAGRECALL_CLAIMS_STORE", str(tmp_path / "claims.db"))
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows(30)))
    out = tmp_path / "results.jsonl"
    assert main(["eval", str(data), *JUDGE, "--out", str(out)]) == 0
    return out


def review(results: Path, *extra: str) -> Path:
    folder = results.parent / "review"
    assert main(["review", str(results), "--out", str(folder), *extra]) == 0
    return folder


def human_recall(record: Record, said: Callable[[str, str], bool]) -> float:
    claims = record.results["context_recall"].claims
    return sum(said(c, record.sample.sample_id or "") for c in claims) / len(claims)


def table(folder: Path) -> list[dict[str, str]]:
    return list(csv.DictReader((folder / "review.csv").open(encoding="utf-8")))


CHROMIUM = next(
    (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None
)


def hostile_page(tmp_path: Path) -> Path:
    """The report `ragrecall eval --report --labels` writes of 14 results whose every text is
    hostile HTML (read back from --out: no judge call), 10 whole answers labelled."""
    records = [hostile_record(i, (i % 3) / 2) for i in range(14)]
    results, data = tmp_path / "results.jsonl", tmp_path / "data.jsonl"
    results.write_text("".join(r.to_json() + "\n" for r in records), encoding="utf-8")
    samples = [r.sample.model_dump(mode="json", exclude_none=True) for r in records]
    data.write_text("".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8")
    labelled = table(review(results, "--answers", "10"))
    for row in labelled:  # people find one of each answer's two claims supported
        row["label"] = "supported" if row["claim"] == "Cats purr." else "not supported"
    labels = tmp_path / "labels.csv"
    with labels.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, list(labelled[0]))
        writer.writeheader()
        writer.writerows(labelled)
    page = tmp_path / "report.html"
    extra = ["--out", str(results), "--labels", str(labels), "--report", str(page)]
    assert main(["eval", str(data), *JUDGE, *extra]) == 0
    assert "Corrected with people" in page.read_text(encoding="utf-8")
    return page


def test_renders_in_headless_chromium(tmp_path: Path) -> None:
    # .ci/run installs Debian's chromium; elsewhere: apt-get install chromium
    assert CHROMIUM is not None, "headless Chromium is not installed (apt-get install chromium)"
    page = hostile_page(tmp_path)
    shot = tmp_path / "shot.png"
    run = subprocess.run(
        [
            CHROMIUM,
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-logging=stderr",
            "--v=0",
            f"--screenshot={shot}",
            "--window-size=1200,1600",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shot.exists() and shot.stat().st_size > 1000, run.stderr
    console = [line for line in run.stderr.splitlines() if "CONSOLE" in line]
    assert not [line for line in console if "error" in line.lower()], console
    assert "Refused to" not in run.stderr  # nothing blocked by the page's own policy


def test_label_in_a_real_browser_then_calibrate(results: Path, tmp_path: Path) -> None:
    # .ci/run installs Debian's chromium; elsewhere: apt-get install chromium
    folder = review(results, "--uncertain", "10", "--random", "20")
    table = list(csv.DictReader((folder / "review.csv").open()))
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    browser = Browser(tmp_path / "profile")
    try:
        browser.send(
            "Browser.setDownloadBehavior",
            {"behavior": "allow", "downloadPath": str(downloads), "eventsEnabled": True},
        )
        browser.open((folder / "review.html").as_uri())
        assert browser.evaluate("document.getElementById('progress').textContent").startswith(
            "0 of 30 labelled"
        )
        for n, row in enumerate(table):
            shown = "document.querySelector('.item.current')"
            assert browser.evaluate(f"{shown}.querySelector('.claim').textContent") == row["claim"]
            assert browser.evaluate(f"{shown}.querySelector('.judge').hidden") is True
            key = "s" if n == 0 else "y" if truth(row["claim"], row["sample_id"]) else "n"
            browser.press(key)
            assert browser.evaluate(f"{shown}.querySelector('.judge').hidden") is False
            browser.press("ArrowRight")
        progress = browser.evaluate("document.getElementById('progress').textContent")
        assert progress.startswith("30 of 30 labelled")
        exported = browser.export(downloads)
    finally:
        browser.close()
    labels = read_labels(exported)
    assert [x.label for x in labels][:2] == [
        "skip",
        "supported" if truth(table[1]["claim"], table[1]["sample_id"]) else "not_supported",
    ]
    assert [(x.key, x.claim) for x in labels] == [(r["key"], r["claim"]) for r in table]
    out = tmp_path / "calibration.json"
    assert main(["calibrate", str(exported), "--out", str(out)]) == 0
    profile = CalibrationProfile.load(out)
    assert (profile.judge, profile.prompt_version, profile.labels) == (
        "scripted:scripted",
        PROMPT_VERSION,
        29,
    )
    assert profile.agreement["before"].n == 29
    assert profile.agreement["before_random"].n == 20 - (table[0]["pick"] == "random")


def test_label_answers_in_a_real_browser_then_eval(
    results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # .ci/run installs Debian's chromium; elsewhere: apt-get install chromium

    a = results
    folder = review(a, "--answers", "10", "--seed", "11")
    rows_shown = table(folder)
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    browser = Browser(tmp_path / "profile")
    try:
        browser.send(
            "Browser.setDownloadBehavior",
            {"behavior": "allow", "downloadPath": str(downloads), "eventsEnabled": True},
        )
        browser.open((folder / "review.html").as_uri())
        for row in rows_shown:
            shown = "document.querySelector('.item.current')"
            assert browser.evaluate(f"{shown}.querySelector('.claim').textContent") == row["claim"]
            browser.press("y" if truth(row["claim"], row["sample_id"]) else "n")
            browser.press("ArrowRight")
        exported = browser.export(downloads)
    finally:
        browser.close()
    lines = [json.loads(x) for x in exported.read_text().splitlines()]
    records = {r.key: r for r in read_records(a)}
    assert len(lines) == len(rows_shown)
    for line in lines:  # the page counted each answer's recall, exactly as Python does
        assert line["human_recall"] == human_recall(records[line["key"]], truth)
    capsys.readouterr()
    data = str(a.parent / "data.jsonl")
    assert main(["eval", data, *JUDGE, "--out", str(a), "--labels", str(exported)]) == 0
    assert "corrected by 10 labelled answers" in capsys.readouterr().out
