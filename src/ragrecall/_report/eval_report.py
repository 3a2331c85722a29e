"""The page of one ``eval`` run (``eval --report`` and ``EvaluationReport.to_html`` both call
``eval_report``): summary, the means corrected by people's labels, histograms, a sortable table
of the samples, and every claim with its verdict and cited evidence. ``report_display`` is the
small fragment a notebook shows for an ``EvaluationReport``."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from html import escape

from .._analysis.corrected import CorrectedMean
from .._analysis.summary import RunSummary, summarize
from .._core.schemas import ClaimVerdict, RecallResult, Sample, Usage
from .._running.store import Record
from .html import cell, fmt, highlight, histogram_svg, interval, page

__all__ = ["corrected_html", "eval_report", "report_display"]


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
        else f"score {fmt(result.score)}"
        + (f' <span class="dim">({escape(result.reason)})</span>' if result.reason else "")
    )
    spread = ""
    if result.interval is not None:
        low, high = result.interval
        spread = f' <span class="pill">90% [{fmt(low, 2)}, {fmt(high, 2)}] from the judge</span>'
    scored = [s for s in runs if s is not None]
    if len(scored) > 1:
        spread += (
            f' <span class="pill">runs {", ".join(fmt(s, 2) for s in runs)}; std '
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
    not_reached: int = 0,
) -> str:
    """The report of one ``eval`` run: summary, the means corrected by people's labels,
    histograms, a sortable table, every claim. ``not_reached``: the samples a budget stopped
    the run before (not in ``records``)."""
    ordered = sorted(records, key=lambda r: r.index)
    body = [f"<h1>ragrecall report{': ' + escape(title) if title else ''}</h1>"]
    rows = []
    for name in metrics:
        s = summarize(ordered, name)
        ci = "" if s.ci is None else f"[{s.ci[0]:.3f}, {s.ci[1]:.3f}]"
        both = s.ci_with_judge
        with_judge = "" if both is None else f"[{both[0]:.3f}, {both[1]:.3f}]"
        rows.append(
            f"<tr><td>{escape(name)}</td>{cell(fmt(s.mean), numeric=True)}"
            f"{cell(ci, numeric=True)}{cell(with_judge, numeric=True)}"
            f"{cell(str(len(s.scores)), numeric=True)}"
            f"{cell(str(s.unscorable), numeric=True)}</tr>"
        )
    body.append(
        "<h2>Summary</h2><table><thead><tr><th>metric</th><th>mean</th><th>95% CI</th>"
        "<th>95% CI with judge uncertainty</th><th>scored</th><th>unscorable</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
    if not_reached:
        body.append(f'<p class="dim">{_not_reached_note(not_reached)}</p>')
    if corrected:
        body.append(corrected_html(corrected))
    body.append("<h2>Score distribution</h2>")
    for name in metrics:
        scores = [s for s in (r.score(name) for r in ordered) if s is not None]
        body.append(histogram_svg(scores, label=name))
    head = "".join(f"<th>{escape(n)}</th>" for n in metrics)
    table_rows = []
    for r in ordered:
        cells = [cell(str(r.index), r.index, numeric=True), cell(r.sample.user_input or r.key)]
        for name in metrics:
            score = r.score(name)
            cells.append(
                cell(
                    "unscorable" if score is None else fmt(score),
                    -1 if score is None else score,
                    numeric=True,
                )
            )
        missing = sum(len(res.missing) for res in r.results.values())
        cells.append(cell(str(missing), missing, numeric=True))
        cells.append(f'<td><a href="#s-{r.index}">details</a></td>')
        table_rows.append(f"<tr>{''.join(cells)}</tr>")
    body.append(
        '<h2>Samples</h2><p class="dim">Click a column header to sort.</p>'
        f'<table class="sortable"><thead><tr><th>#</th><th>question</th>{head}'
        f"<th>missing</th><th></th></tr></thead><tbody>{''.join(table_rows)}</tbody></table>"
    )
    body.append("<h2>Claims</h2>")
    for r in ordered:
        labels = ", ".join(f"{n} {fmt(r.score(n), 2)}" for n in metrics)
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


def corrected_html(corrected: Sequence[CorrectedMean]) -> str:
    """The section of the eval report on the means corrected by people's labels."""
    rows = []
    for c in corrected:
        p = c.ppi
        bias = "" if c.bias_interval is None else interval(*c.bias_interval, signed=True)
        unused = c.unmatched + c.unscorable
        rows.append(
            f"<tr><td>{escape(c.metric)}</td>{cell(fmt(p.judge_mean), numeric=True)}"
            f"{cell(fmt(p.estimate), numeric=True)}"
            f"{cell(interval(p.low, p.high), numeric=True)}"
            f"{cell(f'{p.labels} of {p.total}', numeric=True)}"
            f"{cell(f'{p.judge_bias:+.3f}', numeric=True)}{cell(bias, numeric=True)}"
            f"{cell(interval(*p.labels_only), numeric=True)}"
            f"{cell(str(unused), numeric=True)}{cell(p.method)}</tr>"
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


def _not_reached_note(count: int) -> str:
    return (
        f"not reached: {count} samples (the budget was spent before they started; "
        "neither scored nor unscorable)"
    )


_SMALL = "border-collapse:collapse;margin:.3rem 0"
_CELL = "border:1px solid #d5d9e0;padding:.2rem .5rem;text-align:right"


def report_display(
    records: Sequence[Record],
    metrics: Sequence[str],
    *,
    not_reached: int = 0,
    usage: Usage | None = None,
    cost: float | None = None,
    worst: int = 5,
) -> str:
    """A notebook's view of a run: per metric its mean, 95% CI and counts (scored,
    unscorable, not reached), the judge's usage and cost, and the ``worst`` lowest samples of
    the first metric with their missing claims. Inline styles, no script, every text escaped."""
    summary = RunSummary(metrics, worst)
    for record in sorted(records, key=lambda r: r.index):
        summary.add(record)
    heads = ("metric", "mean", "95% CI", "scored", "unscorable", "not reached")
    head = "".join(f'<th style="{_CELL}">{h}</th>' for h in heads)
    rows = []
    for s in summary.metrics:
        ci = "" if s.ci is None else f"[{s.ci[0]:.3f}, {s.ci[1]:.3f}]"
        cells = (fmt(s.mean), ci, str(len(s.scores)), str(s.unscorable), str(not_reached))
        rows.append(
            f'<tr><td style="{_CELL};text-align:left">{escape(s.name)}</td>'
            + "".join(f'<td style="{_CELL}">{escape(c)}</td>' for c in cells)
            + "</tr>"
        )
    parts = [
        f"<b>ragrecall: {summary.count} of {summary.count + not_reached} samples</b>",
        f'<table style="{_SMALL}"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}'
        "</tbody></table>",
    ]
    if usage is not None:
        spent = f"judge calls {usage.calls}, tokens {usage.prompt_tokens} in, "
        spent += f"{usage.completion_tokens} out"
        spent += "" if cost is None else f", cost ${cost:.4f}"
        parts.append(f"<div>this run: {escape(spent)}</div>")
    lowest = summary.worst()
    if lowest:
        parts.append(f"<div><b>lowest {escape(metrics[0])}</b></div><ul>")
        for r in lowest:
            result = r.results[metrics[0]]
            score = "unscorable" if result.score is None else f"{result.score:.2f}"
            why = f" ({escape(result.reason)})" if result.score is None else ""
            missing = "".join(f"<li>missing: {escape(c)}</li>" for c in result.missing)
            parts.append(
                f"<li>[{score}] #{r.index} {escape(r.sample.user_input or r.key)}{why}"
                + (f"<ul>{missing}</ul>" if missing else "")
                + "</li>"
            )
        parts.append("</ul>")
    return f'<div class="ragrecall-report">{"".join(parts)}</div>'
