"""HTML reports: self-contained, everything escaped; rendered in headless Chromium if present."""

from __future__ import annotations

from html.parser import HTMLParser

from hostile_records import HOSTILE, corrected, hostile_record

# The report's renderer (private): pages of hand-made records, and its highlight and histogram.
from ragrecall._analysis.compare import compare_records
from ragrecall._report.compare_report import compare_report
from ragrecall._report.eval_report import eval_report
from ragrecall._report.html import highlight, histogram_svg
from ragrecall.calibration import AnswerLabel
from ragrecall.engines import Record
from ragrecall.stats import ppi_mean


class Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(html: str) -> Collector:
    collector = Collector()
    collector.feed(html)
    return collector


def test_hostile_text_is_escaped_everywhere() -> None:
    html = eval_report(
        [hostile_record(0), hostile_record(1, 1.0)], ["context_recall"], title=HOSTILE
    )
    parsed = parse(html)
    tags = [t for t, _ in parsed.tags]
    assert tags.count("script") == 1  # only the report's own sorting script
    assert "img" not in tags
    assert all(attrs for tag, attrs in parsed.tags if tag == "b")  # only our own <b class=..>
    text = "".join(parsed.text)
    assert "<script>alert(1)</script>" in text  # shown as text
    assert "Which <b>tag</b>?" in text
    # no attribute carries an event handler, no resource is loaded from anywhere
    assert not any(k.startswith("on") for _, attrs in parsed.tags for k in attrs)
    assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in html
    assert "Content-Security-Policy" in html and "default-src 'none'" in html


def test_report_parts() -> None:
    html = eval_report([hostile_record(0), hostile_record(1, 1.0)], ["context_recall"])
    parsed = parse(html)
    tags = [t for t, _ in parsed.tags]
    assert "svg" in tags and "rect" in tags
    assert any(t == "table" and a.get("class") == "sortable" for t, a in parsed.tags)
    assert "<mark>Cats purr</mark> loudly." in html  # evidence found ignoring case/spaces
    assert 'id="s-1"' in html and 'href="#s-1"' in html


def test_highlight_and_histogram() -> None:
    assert highlight("a <b> c", "<B>") == "a <mark>&lt;b&gt;</mark> c"
    assert highlight("abc", "zzz") == "abc"
    svg = histogram_svg([0.0, 0.05, 1.0, 1.0], bins=10)
    assert svg.count("<rect") == 10 and ">2</text>" in svg


def test_compare_report_escapes_claims() -> None:
    a = hostile_record(0, 0.5)
    fixed = a.results["context_recall"].model_copy(update={"score": 1.0, "missing": []})
    b = Record(a.key, 0, a.sample, {"context_recall": fixed})
    html = compare_report(compare_records([a], [b]), "A <x>", "B")
    parsed = parse(html)
    assert [t for t, _ in parsed.tags].count("script") == 1
    assert f"+ Dogs fly. {HOSTILE}" in "".join(parsed.text)


def test_report_shows_the_corrected_mean() -> None:
    records = [hostile_record(i, (i % 3) / 2) for i in range(14)]
    c = corrected(records)
    scores = [r.score("context_recall") or 0.0 for r in records]
    assert c.ppi == ppi_mean(scores, scores[:10], [0.5] * 10)
    html = eval_report(records, ["context_recall"], corrected=[c])
    text = "".join(parse(html).text)
    assert "Corrected with people's labels" in text and "10 of 14" in text
    assert f"{c.estimate:.3f}" in text and f"[{c.ppi.low:.3f}, {c.ppi.high:.3f}]" in text
    assert f"{c.bias:+.3f}" in text and "Corrected" not in eval_report(records, ["context_recall"])


def test_compare_report_shows_the_corrected_difference() -> None:
    from ragrecall._analysis.corrected import corrected_difference

    a = [hostile_record(i, 1.0) for i in range(12)]
    b = [
        Record(
            r.key,
            r.index,
            r.sample,
            {
                "context_recall": hostile_record(r.index)
                .results["context_recall"]
                .model_copy(update={"score": 0.5 if r.index % 2 else 1.0})
            },
            content=f"b{r.index}",
        )
        for r in a
    ]
    answers = [
        AnswerLabel("context_recall", r.key, r.occurrence, r.content, None, None, 2, 2, "x")
        for r in a
    ] + [
        AnswerLabel("context_recall", r.key, r.occurrence, r.content, None, None, 0, 2, "y")
        for r in b[:10]
    ]
    d = corrected_difference(a, b, answers, "context_recall")
    assert (d.ppi.labels, d.ppi.total, d.verdict, d.one_side) == (10, 12, "worse", 2)
    html = compare_report(compare_records(a, b), "A", "B", d)
    text = "".join(parse(html).text)
    assert "Corrected with people's labels: worse" in text and "10 / 12" in text
    assert f"{d.ppi.estimate:+.3f}" in text and "labelled on one side only (not used)" in text
