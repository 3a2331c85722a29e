"""The shell of every self-contained HTML page (``page``: inline CSS, one inline script) and
the pieces the pages share: table cells, numbers, intervals, an SVG histogram, a quote marked
in its chunk. The pages are ``eval_report.py``, ``compare_report.py`` and ``review.py``.

Everything that comes from data (questions, chunks, claims, reasons) is HTML-escaped: chunks
are untrusted text. A Content-Security-Policy allows no network access and only the one
inline script whose hash it names, so even text that slipped past escaping could not run.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Sequence
from html import escape

__all__ = ["cell", "fmt", "highlight", "histogram_svg", "interval", "page"]

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


def fmt(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def cell(text: str, sort_value: str | float | None = None, numeric: bool = False) -> str:
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


def interval(low: float, high: float, signed: bool = False) -> str:
    sign = "+" if signed else ""
    return f"[{low:{sign}.3f}, {high:{sign}.3f}]"
