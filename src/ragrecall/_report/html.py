"""Self-contained HTML reports: inline CSS, inline SVG plots, a few lines of inline JS.

Everything that comes from data (questions, chunks, claims, reasons) is HTML-escaped: chunks
are untrusted text. A Content-Security-Policy allows no network access and only the one
inline script whose hash it names, so even text that slipped past escaping could not run.

One concern over 300 lines: the self-contained HTML pages (style, script, report, compare).
"""

from __future__ import annotations

import base64
import hashlib
import re
import statistics
from collections.abc import Sequence
from html import escape

from .._analysis.compare import Comparison
from .._analysis.corrected import CorrectedDifference, CorrectedMean
from .._analysis.summary import summarize
from .._core.schemas import ClaimVerdict, RecallResult, Sample
from .._running.store import Record

__all__ = ["compare_report", "eval_report", "highlight", "histogram_svg", "page"]

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem;color:#1d2433}
h1{font-size:1.4rem}h2{font-size:1.15rem;margin-top:2rem}
table{border-collapse:collapse;margin:.5rem 0}
th,td{border:1px solid #d5d9e0;padding:.3rem .6rem;text-align:left;vertical-align:top}
th{background:#f1f3f7}table.sortable th{cursor:pointer}table.sortable th:hover{background:#e3e7ef}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.ok{color:#137333}.bad{color:#b3261e}.dim{color:#69707d}
details{border:1px solid #d5d9e0;border-radius:6px;margin:.4rem 0;padding:.3rem .6rem}
summary{cursor:pointer;font-weight:600}
.chunk{white-space:pre-wrap;background:#f7f8fa;border-left:3px solid #9aa4b5;padding:.3rem .6rem;
margin:.2rem 0 .6rem;max-height:14rem;overflow:auto}
mark{background:#fde68a}
.verdict{margin:.4rem 0}.pill{display:inline-block;border-radius:9px;padding:0 .5rem;
background:#eef1f6;margin-right:.3rem}
svg text{font:11px system-ui,sans-serif;fill:#1d2433}
"""

_JS = """
document.querySelectorAll("table.sortable th").forEach(function (th, col) {
  th.addEventListener("click", function () {
    var body = th.closest("table").tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var asc = th.getAttribute("data-dir") !== "asc";
    rows.sort(function (a, b) {
      var x = a.cells[col].getAttribute("data-v"), y = b.cells[col].getAttribute("data-v");
      var nx = parseFloat(x), ny = parseFloat(y);
      var c = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : String(x).localeCompare(String(y));
      return asc ? c : -c;
    });
    th.setAttribute("data-dir", asc ? "asc" : "desc");
    rows.forEach(function (r) { body.appendChild(r); });
  });
});
"""


def page(title: str, body: str, *, script: str = _JS, css: str = "") -> str:
    """The page around ``body``: inline style, and ``script`` the only script allowed."""
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    policy = (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
        f"script-src 'sha256-{digest}'"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{_CSS}{css}</style></head>\n<body>\n{body}\n"
        f"<script>{script}</script>\n</body></html>\n"
    )


def _fmt(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _cell(text: str, sort_value: str | float | None = None, numeric: bool = False) -> str:
    value = text if sort_value is None else str(sort_value)
    klass = ' class="num"' if numeric else ""
    return f'<td{klass} data-v="{escape(value)}">{escape(text)}</td>'


def histogram_svg(
    values: Sequence[float],
    *,
    low: float = 0.0,
    high: float = 1.0,
    bins: int = 10,
    label: str = "score",
) -> str:
    """An inline SVG histogram of ``values`` over [low, high] (the last bin includes high)."""
    counts = [0] * bins
    width = (high - low) / bins
    for v in values:
        i = min(max(int((v - low) / width), 0), bins - 1)
        counts[i] += 1
    w, h, pad = 480, 200, 30
    bar = (w - 2 * pad) / bins
    top = max(counts) or 1
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" role="img" '
        f'aria-label="{escape(label)} histogram">',
        f'<line x1="{pad}" y1="{h - pad}" x2="{w - pad}" y2="{h - pad}" stroke="#69707d"/>',
    ]
    for i, count in enumerate(counts):
        height = (h - 2 * pad) * count / top
        x = pad + i * bar
        parts.append(
            f'<rect x="{x + 1:.1f}" y="{h - pad - height:.1f}" width="{bar - 2:.1f}" '
            f'height="{height:.1f}" fill="#4f6bed"><title>{count} in '
            f"[{low + i * width:.2f}, {low + (i + 1) * width:.2f}]</title></rect>"
        )
        if count:
            parts.append(
                f'<text x="{x + bar / 2:.1f}" y="{h - pad - height - 3:.1f}" '
                f'text-anchor="middle">{count}</text>'
            )
    for i in range(bins + 1):
        if i % max(1, bins // 5) == 0:
            parts.append(
                f'<text x="{pad + i * bar:.1f}" y="{h - pad + 14}" text-anchor="middle">'
                f"{low + i * width:.1f}</text>"
            )
    parts.append(f'<text x="{w / 2}" y="{h - 2}" text-anchor="middle">{escape(label)}</text></svg>')
    return "".join(parts)


def highlight(text: str, quote: str | None) -> str:
    """``text`` escaped, with ``quote`` (matched ignoring case and whitespace) in <mark>."""
    if quote and quote.strip():
        words = quote.split()
        pattern = r"\s+".join(re.escape(w) for w in words)
        found = re.search(pattern, text, re.IGNORECASE)
        if found:
            return (
                escape(text[: found.start()])
                + "<mark>"
                + escape(found.group(0))
                + "</mark>"
                + escape(text[found.end() :])
            )
    return escape(text)


def _chunk_text(sample: Sample, chunk_id: str) -> str | None:
    for chunk in sample.retrieved_contexts:
        if chunk.id == chunk_id:
            return chunk.text
    if chunk_id == "response":
        return sample.response
    return None


def _verdict_html(sample: Sample, v: ClaimVerdict) -> str:
    mark = '<span class="ok">&#10003;</span>'
    if not v.attributed:
        mark = '<span class="bad">&#10007;</span>'
    chunks = ", ".join(v.chunk_ids)
    head = (
        f'<div class="verdict">{mark} {escape(v.claim)} '
        + (f'<span class="pill">chunk {escape(chunks)}</span>' if chunks else "")
        + (f'<span class="pill">p {v.p_supported:.2f}</span>' if v.p_supported is not None else "")
        + ('<span class="pill">uncertain: check</span>' if v.uncertain else "")
        + f'<div class="dim">{escape(v.reason)}</div>'
    )
    body = ""
    for chunk_id in v.chunk_ids:
        text = _chunk_text(sample, chunk_id)
        if text is not None:
            body += f'<div class="chunk">{highlight(text, v.evidence)}</div>'
    if v.evidence and not body:
        body = f'<div class="chunk"><mark>{escape(v.evidence)}</mark></div>'
    return head + body + "</div>"


def _result_html(sample: Sample, name: str, result: RecallResult, runs: list[float | None]) -> str:
    status = (
        f'<span class="bad">unscorable: {escape(result.reason)}</span>'
        if result.score is None
        else f"score {_fmt(result.score)}"
        + (f' <span class="dim">({escape(result.reason)})</span>' if result.reason else "")
    )
    spread = ""
    if result.interval is not None:
        low, high = result.interval
        spread = f' <span class="pill">90% [{_fmt(low, 2)}, {_fmt(high, 2)}] from the judge</span>'
    scored = [s for s in runs if s is not None]
    if len(scored) > 1:
        spread += (
            f' <span class="pill">runs {", ".join(_fmt(s, 2) for s in runs)}; std '
            f"{statistics.stdev(scored):.3f}</span>"
        )
    parts = [f"<h4>{escape(name)}: {status}{spread}</h4>"]
    parts += [_verdict_html(sample, v) for v in result.verdicts]
    if result.missing:
        items = "".join(f"<li>{escape(c)}</li>" for c in result.missing)
        parts.append(f'<div><b class="bad">missing</b><ul>{items}</ul></div>')
    return "".join(parts)


def eval_report(
    records: Sequence[Record],
    metrics: Sequence[str],
    *,
    title: str = "",
    corrected: Sequence[CorrectedMean] = (),
) -> str:
    """The report of one ``eval`` run: summary, the means corrected by people's labels,
    histograms, a sortable table, every claim."""
    ordered = sorted(records, key=lambda r: r.index)
    body = [f"<h1>ragrecall report{': ' + escape(title) if title else ''}</h1>"]
    rows = []
    for name in metrics:
        s = summarize(ordered, name)
        ci = "" if s.ci is None else f"[{s.ci[0]:.3f}, {s.ci[1]:.3f}]"
        both = s.ci_with_judge
        with_judge = "" if both is None else f"[{both[0]:.3f}, {both[1]:.3f}]"
        rows.append(
            f"<tr><td>{escape(name)}</td>{_cell(_fmt(s.mean), numeric=True)}"
            f"{_cell(ci, numeric=True)}{_cell(with_judge, numeric=True)}"
            f"{_cell(str(len(s.scores)), numeric=True)}"
            f"{_cell(str(s.unscorable), numeric=True)}</tr>"
        )
    body.append(
        "<h2>Summary</h2><table><thead><tr><th>metric</th><th>mean</th><th>95% CI</th>"
        "<th>95% CI with judge uncertainty</th><th>scored</th><th>unscorable</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
    if corrected:
        body.append(corrected_html(corrected))
    body.append("<h2>Score distribution</h2>")
    for name in metrics:
        scores = [s for s in (r.score(name) for r in ordered) if s is not None]
        body.append(histogram_svg(scores, label=name))
    head = "".join(f"<th>{escape(n)}</th>" for n in metrics)
    table_rows = []
    for r in ordered:
        cells = [_cell(str(r.index), r.index, numeric=True), _cell(r.sample.user_input or r.key)]
        for name in metrics:
            score = r.score(name)
            cells.append(
                _cell(
                    "unscorable" if score is None else _fmt(score),
                    -1 if score is None else score,
                    numeric=True,
                )
            )
        missing = sum(len(res.missing) for res in r.results.values())
        cells.append(_cell(str(missing), missing, numeric=True))
        cells.append(f'<td><a href="#s-{r.index}">details</a></td>')
        table_rows.append(f"<tr>{''.join(cells)}</tr>")
    body.append(
        '<h2>Samples</h2><p class="dim">Click a column header to sort.</p>'
        f'<table class="sortable"><thead><tr><th>#</th><th>question</th>{head}'
        f"<th>missing</th><th></th></tr></thead><tbody>{''.join(table_rows)}</tbody></table>"
    )
    body.append("<h2>Claims</h2>")
    for r in ordered:
        labels = ", ".join(f"{n} {_fmt(r.score(n), 2)}" for n in metrics)
        parts = [
            _result_html(r.sample, n, r.results[n], r.results[n].runs)
            for n in metrics
            if n in r.results
        ]
        body.append(
            f'<details id="s-{r.index}"><summary>#{r.index} '
            f"{escape(r.sample.user_input or r.key)} &mdash; {escape(labels)}</summary>"
            f'<div class="dim">reference: {escape(r.sample.reference or "")}</div>'
            f"{''.join(parts)}</details>"
        )
    return page(f"ragrecall report {title}", "\n".join(body))


def _interval(low: float, high: float, signed: bool = False) -> str:
    sign = "+" if signed else ""
    return f"[{low:{sign}.3f}, {high:{sign}.3f}]"


def corrected_html(corrected: Sequence[CorrectedMean]) -> str:
    """The section of the eval report on the means corrected by people's labels."""
    rows = []
    for c in corrected:
        p = c.ppi
        bias = "" if c.bias_interval is None else _interval(*c.bias_interval, signed=True)
        unused = c.unmatched + c.unscorable
        rows.append(
            f"<tr><td>{escape(c.metric)}</td>{_cell(_fmt(p.judge_mean), numeric=True)}"
            f"{_cell(_fmt(p.estimate), numeric=True)}"
            f"{_cell(_interval(p.low, p.high), numeric=True)}"
            f"{_cell(f'{p.labels} of {p.total}', numeric=True)}"
            f"{_cell(f'{p.judge_bias:+.3f}', numeric=True)}{_cell(bias, numeric=True)}"
            f"{_cell(_interval(*p.labels_only), numeric=True)}"
            f"{_cell(str(unused), numeric=True)}{_cell(p.method)}</tr>"
        )
    level = f"{corrected[0].ppi.confidence:.0%}"
    return (
        '<h2 id="corrected">Corrected with people\'s labels</h2><p class="dim">The judge\'s '
        "mean corrected by people's recall of whole answers drawn at random "
        "(prediction-powered inference); bias: the judge's mean minus people's on the "
        "labelled answers (positive: generous). Labelled answers not used: those matching no "
        "sample or unscorable in this run.</p>"
        "<table><thead><tr><th>metric</th><th>judge's mean</th><th>corrected mean</th>"
        f"<th>{level} interval</th><th>labelled answers</th><th>judge's bias</th>"
        f"<th>bias {level} interval</th><th>labels alone</th><th>labelled, not used</th>"
        f"<th>method</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def compare_report(
    c: Comparison,
    a_name: str = "A",
    b_name: str = "B",
    corrected: CorrectedDifference | None = None,
) -> str:
    """The report of ``compare``: verdict and statistics, the corrected difference (with
    labels), the differences, changed claims."""
    body = [
        f"<h1>ragrecall compare: {escape(c.metric)}</h1>",
        f"<p>A = {escape(a_name)}<br>B = {escape(b_name)}</p>",
    ]
    klass = {"better": "ok", "worse": "bad"}.get(c.verdict, "dim")
    stats = [
        ("samples A / B / paired", f"{c.n_a} / {c.n_b} / {c.n_shared}"),
        ("only in A / only in B", f"{c.only_a} / {c.only_b}"),
        ("both scored", str(len(c.pairs))),
    ]
    if c.mean_diff is not None and c.ci is not None and c.wilcoxon is not None:
        stats += [
            ("mean A / B", f"{_fmt(c.mean_a)} / {_fmt(c.mean_b)}"),
            ("mean difference B - A", f"{c.mean_diff:+.3f}"),
            (f"{c.confidence:.0%} bootstrap CI", f"[{c.ci[0]:+.3f}, {c.ci[1]:+.3f}]"),
            ("permutation test p", f"{c.p_value:.4g}"),
            (f"Wilcoxon signed-rank p ({c.wilcoxon.method})", f"{c.wilcoxon.p_value:.4g}"),
            ("effect size (paired d)", "" if c.effect_size is None else f"{c.effect_size:+.2f}"),
            (
                "smallest detectable difference (80% power)",
                "none: too few pairs"
                if c.mdd is None or c.mdd == float("inf")
                else f"±{c.mdd:.3f}",
            ),
        ]
    rows = "".join(f"<tr><td>{escape(k)}</td>{_cell(v, numeric=True)}</tr>" for k, v in stats)
    body.append(
        f'<h2>Verdict: <span class="{klass}">{escape(c.verdict)}</span> '
        f"(alpha {c.alpha})</h2><table><tbody>{rows}</tbody></table>"
    )
    if corrected is not None:
        body.append(_corrected_difference_html(corrected))
    body.append("<h2>Differences B - A</h2>")
    body.append(
        histogram_svg([p.diff for p in c.pairs], low=-1.0, high=1.0, bins=20, label="B - A")
    )
    pair_rows = "".join(
        f"<tr>{_cell(p.question or p.key)}{_cell(_fmt(p.a), p.a, True)}"
        f"{_cell(_fmt(p.b), p.b, True)}{_cell(f'{p.diff:+.3f}', p.diff, True)}</tr>"
        for p in sorted(c.pairs, key=lambda p: p.diff)
    )
    body.append(
        '<table class="sortable"><thead><tr><th>question</th><th>A</th><th>B</th>'
        f"<th>B - A</th></tr></thead><tbody>{pair_rows}</tbody></table>"
    )
    body.append("<h2>Claims recovered and lost</h2>")
    if not c.changes:
        body.append('<p class="dim">No claim changed between A and B.</p>')
    for change in c.changes:
        items = "".join(f'<li class="ok">+ {escape(x)}</li>' for x in change.recovered)
        items += "".join(f'<li class="bad">&minus; {escape(x)}</li>' for x in change.lost)
        body.append(
            f"<details open><summary>{escape(change.question or change.key)}</summary>"
            f"<ul>{items}</ul></details>"
        )
    return page(f"ragrecall compare {c.metric}", "\n".join(body))


def _corrected_difference_html(d: CorrectedDifference) -> str:
    p = d.ppi
    klass = {"better": "ok", "worse": "bad"}.get(d.verdict, "dim")
    stats = [
        ("judge's mean difference B - A", f"{p.judge_mean:+.3f}"),
        ("corrected difference B - A", f"{p.estimate:+.3f}"),
        (f"{p.confidence:.0%} interval", _interval(p.low, p.high, signed=True)),
        ("labels alone", _interval(*p.labels_only, signed=True)),
        ("tasks labelled on both sides / paired", f"{p.labels} / {p.total}"),
        ("judge's bias on B minus on A", f"{p.judge_bias:+.3f}"),
        ("labelled on one side only (not used)", str(d.one_side)),
        ("labels matching no answer / unscorable", f"{d.unmatched} / {d.unscorable}"),
        ("method", p.method),
    ]
    rows = "".join(f"<tr><td>{escape(k)}</td>{_cell(v, numeric=True)}</tr>" for k, v in stats)
    return (
        f'<h2 id="corrected">Corrected with people\'s labels: <span class="{klass}">'
        f"{escape(d.verdict)}</span></h2><table><tbody>{rows}</tbody></table>"
    )
