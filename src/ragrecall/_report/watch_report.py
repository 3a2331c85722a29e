"""The page of ``watch``: per metric, a time-series plot (inline SVG: each window's mean and
interval, the baseline's band, the flagged windows marked) and the table of windows. Every
text from data is escaped; the page is ``html.page``'s shell (no network, no other script)."""

from __future__ import annotations

from html import escape

from .._analysis.watch import Watch, Window
from .html import cell, fmt, page

__all__ = ["watch_report"]

_W, _H, _PAD = 760, 260, 44


def watch_report(result: Watch, logs: list[str]) -> str:
    """The report of ``watch`` over ``logs`` (their names, shown)."""
    body = [
        "<h1>ragrecall watch</h1>",
        f"<p>{escape(', '.join(logs))}<br>windows of {escape(result.window)}; "
        f"{escape(result.statement())}</p>",
    ]
    verdict = (
        f'<span class="bad">drop flagged in {len(result.alarms)} window(s)</span>'
        if result.alarms
        else '<span class="ok">no drop flagged</span>'
    )
    body.append(f"<h2>{verdict}</h2>")
    for name in result.metrics:
        body.append(f"<h2>{escape(name)}</h2>")
        body.append(plot_svg(result, name))
        body.append(_table(result, name))
    return page(f"ragrecall watch: {', '.join(result.metrics)}", "\n".join(body))


def plot_svg(result: Watch, metric: str) -> str:
    """Each window's mean (a dot) and interval (a bar) against its place in time, the
    baseline's mean and interval as a band, each flagged window marked in red."""
    windows = result.windows[metric]
    base = result.baseline[metric]
    values = [v for w in windows if w.estimate for v in (w.estimate.low, w.estimate.high)]
    if base is not None:
        values += [base.low, base.high]
    low = max(0.0, (min(values) if values else 0.0) - 0.05)
    high = min(1.0, (max(values) if values else 1.0) + 0.05)
    high = max(high, low + 0.1)
    step = (_W - 2 * _PAD) / max(len(windows), 1)

    def x(i: int) -> float:
        return _PAD + (i + 0.5) * step

    def y(v: float) -> float:
        return _PAD / 2 + (_H - 1.5 * _PAD) * (high - v) / (high - low)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" role="img" '
        f'class="timeseries" data-metric="{escape(metric)}" '
        f'aria-label="{escape(metric)} per window">',
        f'<line x1="{_PAD}" y1="{y(low):.1f}" x2="{_W - _PAD / 2}" y2="{y(low):.1f}" '
        'stroke="#69707d"/>',
    ]
    for tick in (low, (low + high) / 2, high):
        parts.append(
            f'<text x="{_PAD - 4}" y="{y(tick) + 4:.1f}" text-anchor="end">{tick:.2f}</text>'
        )
    if base is not None:
        parts.append(
            f'<rect class="baseline-band" x="{_PAD}" y="{y(base.high):.1f}" '
            f'width="{_W - 1.5 * _PAD:.1f}" height="{max(y(base.low) - y(base.high), 1):.1f}" '
            f'fill="#4f6bed" fill-opacity="0.15"><title>baseline {base.mean:.3f} '
            f"[{base.low:.3f}, {base.high:.3f}]</title></rect>"
        )
        parts.append(
            f'<line class="baseline-mean" x1="{_PAD}" y1="{y(base.mean):.1f}" '
            f'x2="{_W - _PAD / 2}" y2="{y(base.mean):.1f}" stroke="#4f6bed" '
            'stroke-dasharray="4 3"/>'
        )
    flagged = {a.window for a in result.alarms if a.metric == metric}
    for w in windows:
        if w.index in flagged:
            parts.append(
                f'<rect class="alarm" data-window="{w.index}" x="{x(w.index) - step / 2:.1f}" '
                f'y="{_PAD / 2 - 8}" width="{step:.1f}" height="{_H - 1.5 * _PAD + 8:.1f}" '
                'fill="#b3261e" fill-opacity="0.12"><title>drop flagged</title></rect>'
            )
        e = w.estimate
        if e is not None:
            colour = "#b3261e" if w.index in flagged else "#1d2433"
            parts.append(
                f'<line class="interval" data-window="{w.index}" x1="{x(w.index):.1f}" '
                f'y1="{y(e.high):.1f}" x2="{x(w.index):.1f}" y2="{y(e.low):.1f}" '
                f'stroke="{colour}" stroke-width="2"/>'
            )
            parts.append(
                f'<circle class="mean" data-window="{w.index}" data-mean="{e.mean:.4f}" '
                f'cx="{x(w.index):.1f}" cy="{y(e.mean):.1f}" r="4" fill="{colour}">'
                f"<title>{escape(_when(w))}: {e.mean:.3f} [{e.low:.3f}, {e.high:.3f}], "
                f"{w.scored} scored</title></circle>"
            )
        if w.index % max(1, len(windows) // 8) == 0:
            parts.append(
                f'<text x="{x(w.index):.1f}" y="{_H - _PAD / 2 + 4:.1f}" '
                f'text-anchor="middle">{escape(_when(w))}</text>'
            )
    parts.append("</svg>")
    return "".join(parts)


def _when(w: Window) -> str:
    return f"#{w.index + 1}" if w.start is None else w.start.strftime("%Y-%m-%d %H:%M")


def _table(result: Watch, metric: str) -> str:
    flagged = {a.window: a for a in result.alarms if a.metric == metric}
    rows = []
    for w in result.windows[metric]:
        e = w.estimate
        note = "baseline" if w.baseline else ""
        if w.index in flagged:
            a = flagged[w.index]
            note = f"drop -{a.drop:.3f} (p {a.p_value:.2g}, {a.span} window(s), {a.basis})"
        note = ", ".join(x for x in (note, result.note(w)) if x)
        rows.append(
            f"<tr>{cell(_when(w), w.index)}{cell(str(w.scored), w.scored, True)}"
            f"{cell(str(w.unscorable), w.unscorable, True)}"
            f"{cell(fmt(None if e is None else e.mean), None if e is None else e.mean, True)}"
            f"{cell('' if e is None else f'[{e.low:.3f}, {e.high:.3f}]')}{cell(note)}</tr>"
        )
    head = "".join(
        f"<th>{h}</th>" for h in ("window", "scored", "unscorable", "mean", "interval", "")
    )
    return (
        f'<table class="sortable"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
