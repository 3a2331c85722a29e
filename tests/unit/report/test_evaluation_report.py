"""What ``evaluate`` hands back, looked at from Python: ``to_html`` (the page of ``ragrecall
eval --report``, byte for byte), the notebook's display, the run's cost, and the samples a
budget never reached, apart from the unscorable."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from ragrecall import (
    ContextRecall,
    EvaluationReport,
    JudgeInfo,
    RecallResult,
    Sample,
    Usage,
    evaluate,
)
from ragrecall.cli import main
from ragrecall.engines import read_records
from ragrecall.testing import ScriptedJudge, keyword_reply

HOSTILE = "<script>alert(1)</script>"


def rows(n: int) -> list[dict[str, Any]]:
    """Sample i: 3 claims; "Cats purr" always supported, "Dogs bark" unless i % 3 == 0."""
    out = []
    for i in range(n):
        chunks = [f"Cats purr {i} loudly."] + ([f"Dogs bark {i} at night."] if i % 3 else [])
        out.append(
            {
                "question": f"What do animals do ({i})? {HOSTILE if i == 0 else ''}",
                "ground_truth": f"Cats purr {i}. Dogs bark {i}. Birds <b>sing</b> {i}.",
                "contexts": chunks,
                "answer": f"Cats purr {i}.",
            }
        )
    return out


def data_file(tmp_path: Path, n: int) -> Path:
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows(n)), encoding="utf-8")
    return path


def recall() -> ContextRecall:
    return ContextRecall(ScriptedJudge(reply=keyword_reply), claims="sentences")


class Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parsed(html: str) -> Text:
    text = Text()
    text.feed(html)
    return text


def test_to_html_is_the_page_eval_report_writes_byte_for_byte(tmp_path: Path) -> None:
    data, out = data_file(tmp_path, 6), tmp_path / "results.jsonl"
    report = evaluate(data, [recall()], out=out)
    mine = tmp_path / "mine.html"
    page = report.to_html(mine, title=str(data))
    assert mine.read_text("utf-8") == page
    cli = tmp_path / "cli.html"
    flags = ["--judge-factory", "fakes:ScriptedJudge", "--claim-mode", "sentences"]
    argv = ["eval", str(data), *flags, "--out", str(out), "--report", str(cli)]
    assert main(argv) == 0  # every sample resumed from --out: no judge asked again
    assert len(read_records(out)) == 6
    assert cli.read_bytes() == mine.read_bytes()  # nothing differs: the page has no timestamp
    assert page.count('href="#s-') == 6 and "not reached" not in page


def test_a_budget_stopped_run_reports_its_unreached_samples_apart(tmp_path: Path) -> None:
    data, out = data_file(tmp_path, 8), tmp_path / "results.jsonl"
    report = evaluate(data, [recall()], out=out, max_calls=3, concurrency=1)
    statuses = [r.status for r in report.results["context_recall"]]
    assert report.budget_spent and statuses == ["scored"] * 3 + ["not_reached"] * 5
    assert report.not_reached() == [3, 4, 5, 6, 7] and report.unscorable() == []
    assert report.scores["context_recall"] == pytest.approx((1 / 3 + 2 / 3 + 2 / 3) / 3)
    assert list(report.to_pandas()["context_recall_status"]) == statuses
    # never written: the results file holds the 3 scored samples, read back as before
    assert [r.results["context_recall"].status for r in read_records(out)] == ["scored"] * 3
    page = report.to_html()
    assert "not reached: 5 samples" in page and page.count('href="#s-') == 3
    shown = "".join(parsed(report._repr_html_()).text)
    assert "ragrecall: 3 of 8 samples" in shown
    cli = tmp_path / "cli.html"  # the command line: counted apart, the gate does not see them
    argv = ["eval", str(data), "--judge-factory", "fakes:ScriptedJudge", "--claim-mode"]
    argv += ["sentences", "--concurrency", "1", "--max-calls", "3", "--report", str(cli)]
    argv += ["--max-unscorable", "0", "--summary-json", str(tmp_path / "s.json")]
    assert main(argv) == 3
    summary = json.loads((tmp_path / "s.json").read_text())["metrics"]["context_recall"]
    assert summary == {**summary, "scored": 3, "unscorable": 0, "not_reached": 5}
    assert "not reached: 5 samples" in cli.read_text("utf-8")


def test_the_notebook_display_shows_the_summary_and_the_worst_samples_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = evaluate(data_file(tmp_path, 6), [recall()], show_progress=None)
    assert capsys.readouterr().err == ""  # no bar: neither a terminal nor a notebook
    html = report._repr_html_()
    text = parsed(html)
    assert "script" not in text.tags and "b" in text.tags  # only its own <b>
    shown = "".join(text.text)
    assert HTML_ESCAPED_QUESTION in html and HOSTILE in shown  # shown as text
    mean = report.scores["context_recall"]
    assert mean is not None and f"{mean:.3f}" in shown
    assert "ragrecall: 6 of 6 samples" in shown and "lowest context_recall" in shown
    # the lowest first (samples 0 and 3: only "Cats purr" found), with their missing claims
    assert shown.index("[0.33] #0") < shown.index("[0.33] #3") < shown.index("[0.67]")
    assert "missing: Birds <b>sing</b> 0." in shown and "missing: Dogs bark 0." in shown
    assert "judge calls 6" in shown and "cost" not in shown  # a fake judge has no price


HTML_ESCAPED_QUESTION = "&lt;script&gt;alert(1)&lt;/script&gt;"


def result(score: float | None, judge: JudgeInfo | None) -> RecallResult:
    status = "scored" if score is not None else "unscorable"
    return RecallResult(score=score, status=status, judge=judge)


def test_cost_at_the_judges_list_price_or_none() -> None:
    usage = Usage(calls=4, prompt_tokens=2_000_000, completion_tokens=500_000)
    mini = JudgeInfo(model="gpt-4o-mini-2024-07-18", provider="openai")
    samples = [Sample(user_input="q", reference="r")] * 2

    def report(*judges: JudgeInfo | None) -> EvaluationReport:
        return EvaluationReport(
            samples=samples, results={"context_recall": [result(1.0, j) for j in judges]},
            usage=usage,
        )  # fmt: skip

    assert report(mini, None).cost == pytest.approx(2 * 0.15 + 0.5 * 0.60)
    assert "cost $0.6000" in report(mini, None)._repr_html_()
    assert report(JudgeInfo(model="qwen2.5-3b"), None).cost is None  # a price not known
    other = JudgeInfo(model="gpt-4o", provider="openai")
    assert report(mini, other).cost is None  # two judges: no one price


def test_eval_prints_the_cost_of_a_judge_whose_price_it_knows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = data_file(tmp_path, 2)
    flags = ["--judge-factory", "fakes:ScriptedJudge", "--claim-mode", "sentences"]
    assert main(["eval", str(data), *flags]) == 0
    assert "cost" not in capsys.readouterr().out
    priced = [*flags, "--price-in", "1000000", "--price-out", "0"]  # $1 a prompt token
    assert main(["eval", str(data), *priced]) == 0
    printed = capsys.readouterr().out
    tokens = int(printed.split("prompt tokens ")[1].split()[0])
    assert f"cost ${tokens:.4f} (at 1000000.0/0.0 USD per M tokens)" in printed
