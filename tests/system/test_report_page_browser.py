"""``EvaluationReport.to_html`` of a budget-stopped run with hostile text, in headless Chromium:
the DOM it renders holds the text escaped and the samples not reached counted apart; no
console error, nothing blocked by the page's policy."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from ragrecall import ContextRecall, evaluate
from ragrecall.testing import ScriptedJudge

CHROMIUM = next(
    (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None
)


def test_to_html_renders_in_headless_chromium(tmp_path: Path) -> None:
    assert CHROMIUM is not None, "headless Chromium is not installed (apt-get install chromium)"
    rows = [
        {
            "user_input": f"<img src=x onerror=alert({i})> {i}?",
            "reference": f"Cats purr {i}. Dogs <script>bark</script> {i}.",
            "retrieved_contexts": [f"Cats purr {i} loudly."],
        }
        for i in range(6)
    ]
    report = evaluate(rows, [ContextRecall(ScriptedJudge(), claims="sentences")], max_calls=4,
                      concurrency=1)  # fmt: skip
    page = tmp_path / "report.html"
    report.to_html(page, title="<b>run</b>")
    run = subprocess.run(
        [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
         "--v=0", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    dom = run.stdout
    assert "not reached: 2 samples" in dom and dom.count('href="#s-') == 4
    assert "<img src" not in dom and "&lt;img src=x onerror=alert(0)&gt;" in dom
    console = [line for line in run.stderr.splitlines() if "CONSOLE" in line]
    assert not [line for line in console if "error" in line.lower()], console
    assert "Refused to" not in run.stderr  # nothing blocked by the page's own policy
