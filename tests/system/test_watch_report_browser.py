"""The page of `ragrecall watch --report`, in Debian's real headless Chromium (driven over the
DevTools pipe by testkit/cdp.py; .ci/run installs chromium, elsewhere: apt-get install
chromium). A simulated log holds a flat baseline then a 10-point drop; the real command (its
own process) exits 1, and the page it wrote shows the time series: the plot has a size, one
mean and one interval per window, the flagged windows marked as alarms at their own window's
x position (the same windows `--json` and the text table flag), no console error and no
request beyond the page itself."""

from __future__ import annotations

import itertools
import json
import os
import random
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from cdp import Browser

from ragrecall import RecallResult, Sample
from ragrecall.engines import Record

ROOT = Path(__file__).resolve().parents[2]
START = datetime(2026, 3, 1, tzinfo=timezone.utc)
MEANS = [0.7] * 8 + [0.6] * 4  # hourly windows: 8 flat, then a 10-point drop
PER = 150  # records per window


def write_log(path: Path) -> Path:
    """``PER`` records per clock hour, their scores (0, 0.1, ..., 1) spread around each
    window's mean, as ``RecallLogger``'s JSONL sink writes them (every line an event)."""
    rng = random.Random(7)
    lines = []
    for w, mean in enumerate(MEANS):
        for i in range(PER):
            score = min(1.0, max(0.0, round(rng.random() + mean - 0.5, 1)))
            sample = Sample(user_input=f"q{w}-{i}", reference="r.", retrieved_contexts=["c"])
            result = RecallResult(metric="context_recall", score=score, status="scored")
            when = START + timedelta(hours=w, seconds=20 * i)
            record = Record(sample.key(), i, sample, {"context_recall": result}, timestamp=when)
            lines.append(record.to_json() + "\n")
    path.write_text("".join(lines), "utf-8")
    return path


def ragrecall(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command line in its own process, as a scheduled job runs it."""
    env = {**os.environ, "COLUMNS": "200", "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run(
        [sys.executable, "-m", "ragrecall.cli", *argv],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def boxes(browser: Browser, selector: str) -> list[dict[str, Any]]:
    """Every element ``selector`` finds: its data-window and its box on the screen."""
    found: list[dict[str, Any]] = browser.evaluate(
        f"[...document.querySelectorAll({json.dumps(selector)})].map(e => {{"
        "const b = e.getBoundingClientRect();"
        "return {window: Number(e.dataset.window), x: b.x + b.width / 2, width: b.width,"
        " height: b.height, top: b.top, bottom: b.bottom}})"
    )
    return found


def test_the_watch_page_shows_the_drop_where_it_was_flagged(tmp_path: Path) -> None:
    log = write_log(tmp_path / "recall.jsonl")
    page = tmp_path / "page.html"
    argv = ["watch", str(log), "--window", "1h", "--baseline", "first:5"]
    run = ragrecall(*argv, "--report", str(page), "--json", cwd=tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr  # a drop flagged
    value = json.loads(run.stdout)
    windows = value["metrics"]["context_recall"]["windows"]
    assert len(windows) == len(MEANS)
    flagged = sorted({a["window"] for a in value["alarms"]})
    assert flagged and set(flagged) <= set(range(8, len(MEANS)))  # only after the drop
    text = ragrecall(*argv, cwd=tmp_path)  # the text table flags the same windows
    assert text.returncode == 1, text.stdout + text.stderr
    rows = [line for line in text.stdout.splitlines() if "DROP" in line]
    starts = [datetime.fromisoformat(windows[i]["start"]) for i in flagged]
    assert len(rows) == len(flagged), rows
    for start, row in zip(starts, rows, strict=True):
        assert start.strftime("%Y-%m-%d %H:%M") in row, row

    browser = Browser(tmp_path / "profile")
    try:
        browser.open(page.as_uri(), domains=("Page", "Runtime", "Log", "Network"))
        browser.evaluate("1")  # let the load's last events arrive
        plot = browser.evaluate(
            "(() => { const s = document.querySelector('svg.timeseries');"
            " const b = s.getBoundingClientRect(); const c = getComputedStyle(s);"
            " return {width: b.width, height: b.height, display: c.display,"
            " visibility: c.visibility, metric: s.dataset.metric}; })()"
        )
        means = boxes(browser, "svg.timeseries circle.mean")
        intervals = boxes(browser, "svg.timeseries line.interval")
        alarms = boxes(browser, "svg.timeseries rect.alarm")
        marked = browser.evaluate(
            "[...document.querySelectorAll('circle.mean')].map(e => [Number(e.dataset.window),"
            " Number(e.dataset.mean), e.getAttribute('fill')])"
        )
        table = browser.evaluate(
            "[...document.querySelectorAll('table tbody tr')].map(r =>"
            " [Number(r.cells[0].dataset.v), r.cells[5].textContent])"
        )
        external = browser.evaluate(
            "[...document.querySelectorAll('[src], link[href], [href]:not([href^=\"#\"])')]"
            ".map(e => e.outerHTML.slice(0, 120))"
        )
        resources = browser.evaluate("performance.getEntriesByType('resource').map(e => e.name)")
    finally:
        browser.close()

    assert plot["width"] > 0 and plot["height"] > 0, plot
    assert plot["display"] != "none" and plot["visibility"] == "visible"
    assert plot["metric"] == "context_recall"
    indices = list(range(len(MEANS)))
    # one mean and one interval per window, in time order from left to right
    assert [m["window"] for m in means] == indices == [i["window"] for i in intervals]
    assert all(a["x"] < b["x"] for a, b in itertools.pairwise(means))
    for mean, interval in zip(means, intervals, strict=True):
        assert abs(mean["x"] - interval["x"]) < 0.5 and interval["height"] > 0
        centre = (mean["top"] + mean["bottom"]) / 2  # the mean lies within its interval
        assert interval["top"] - 1 <= centre <= interval["bottom"] + 1
    for (index, shown, _), w in zip(marked, windows, strict=True):
        assert index == w["index"] and abs(shown - w["estimate"]["mean"]) < 1e-4
    # the alarms: the windows flagged, each over its own window's mean, in red
    assert [a["window"] for a in alarms] == flagged
    for alarm in alarms:
        assert alarm["width"] > 0 and alarm["height"] > 0
        assert abs(alarm["x"] - means[alarm["window"]]["x"]) < 0.5
    assert [i for i, _, fill in marked if fill == "#b3261e"] == flagged
    assert [i for i, note in table if note.startswith("drop")] == flagged
    assert [i for i, note in table if note == "baseline"] == value["baseline_windows"]
    # no console error, no script error, nothing requested beyond the page
    errors = [
        e
        for e in browser.events
        if (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] == "error")
        or e.get("method") == "Runtime.exceptionThrown"
        or (e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] == "error")
    ]
    assert not errors, errors
    requested = [
        e["params"]["request"]["url"]
        for e in browser.events
        if e.get("method") == "Network.requestWillBeSent"
    ]
    assert requested == [page.as_uri()], requested
    assert not external and not resources, (external, resources)
