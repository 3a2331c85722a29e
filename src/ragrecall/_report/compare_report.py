"""The page of ``compare``: the verdict and its statistics, the difference corrected by
people's labels, the differences per question, and the claims recovered and lost."""

from __future__ import annotations

from html import escape

from .._analysis.compare import Comparison
from .._analysis.corrected import CorrectedDifference
from .html import cell, fmt, histogram_svg, interval, page

__all__ = ["compare_report"]


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
            ("mean A / B", f"{fmt(c.mean_a)} / {fmt(c.mean_b)}"),
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
    rows = "".join(f"<tr><td>{escape(k)}</td>{cell(v, numeric=True)}</tr>" for k, v in stats)
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
        f"<tr>{cell(p.question or p.key)}{cell(fmt(p.a), p.a, True)}"
        f"{cell(fmt(p.b), p.b, True)}{cell(f'{p.diff:+.3f}', p.diff, True)}</tr>"
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
        (f"{p.confidence:.0%} interval", interval(p.low, p.high, signed=True)),
        ("labels alone", interval(*p.labels_only, signed=True)),
        ("tasks labelled on both sides / paired", f"{p.labels} / {p.total}"),
        ("judge's bias on B minus on A", f"{p.judge_bias:+.3f}"),
        ("labelled on one side only (not used)", str(d.one_side)),
        ("labels matching no answer / unscorable", f"{d.unmatched} / {d.unscorable}"),
        ("method", p.method),
    ]
    rows = "".join(f"<tr><td>{escape(k)}</td>{cell(v, numeric=True)}</tr>" for k, v in stats)
    return (
        f'<h2 id="corrected">Corrected with people\'s labels: <span class="{klass}">'
        f"{escape(d.verdict)}</span></h2><table><tbody>{rows}</tbody></table>"
    )
