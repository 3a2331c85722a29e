"""The page and CSV a person labels verdicts in (the items are ``_analysis/review.py``'s picks).

The page is self-contained (no network, works from file://): each claim with its question
and chunks, the cited evidence marked, the judge's verdict hidden until the person answers;
keys ``y`` supported, ``n`` not supported, ``s`` skip; the labels are exported as JSONL for
``calibrate`` and ``eval --labels`` (each row: ``label_fields`` plus the label, and for a
whole answer labelled, its ``human_recall``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from html import escape
from pathlib import Path

from .._analysis.review import ReviewItem
from .._io.cells import write_csv
from .html import highlight, page

__all__ = ["CSV_COLUMNS", "label_fields", "review_csv", "review_page"]


def label_fields(item: ReviewItem) -> dict[str, object]:
    """What a label carries besides the person's answer (the page's export, the CSV)."""
    value = asdict(item)
    for name in ("chunks", "question", "reason", "evidence", "chunk_ids", "answer"):
        value.pop(name)
    return value


CSV_COLUMNS = [
    "key", "occurrence", "sample_id", "question", "claim", "label", "pick", "attributed",
    "p_supported", "word_overlap", "chunk_ids", "evidence", "reason", "judge", "prompt_version",
    "metric", "content", "task", "claim_set", "claim_index", "answer", "answer_claims",
    "judge_score", "human_recall",
]  # fmt: skip


def review_csv(items: Sequence[ReviewItem], path: str | Path) -> None:
    """The items as CSV, for a spreadsheet: fill the ``label`` column with supported,
    not_supported or skip (blank is skip); ``calibrate`` and ``eval --labels`` read the file
    back (``human_recall`` stays blank: the reader counts it from an answer's labels). Cells that a
    spreadsheet would run as a formula are marked with a leading ``'`` (``write_csv``)."""
    write_csv(path, CSV_COLUMNS, (_csv_row(item) for item in items))


def _csv_row(item: ReviewItem) -> dict[str, object]:
    row = {**asdict(item), "label": "", "human_recall": None}
    row["chunk_ids"] = " ".join(item.chunk_ids)
    row.pop("chunks")
    return row


_REVIEW_CSS = """
.item{display:none;max-width:60rem}.item.current{display:block}
.claim{font-size:1.2rem;font-weight:600;margin:.6rem 0}
.judge{border:1px dashed #9aa4b5;border-radius:6px;padding:.4rem .6rem;margin:.6rem 0}
.keys button{margin-right:.4rem;font:inherit;padding:.2rem .6rem}
.answer{font-weight:600}#done{display:none}
"""

_REVIEW_JS = """
(function () {
  var items = Array.prototype.slice.call(document.querySelectorAll(".item"));
  var labels = {}, at = 0;
  var words = {y: "supported", n: "not_supported", s: "skip"};
  function show(i) {
    at = Math.max(0, Math.min(i, items.length - 1));
    items.forEach(function (el, j) { el.classList.toggle("current", j === at); });
    var n = Object.keys(labels).length;
    document.getElementById("progress").textContent =
      n + " of " + items.length + " labelled; item " + (at + 1);
    document.getElementById("done").style.display = n === items.length ? "block" : "none";
  }
  function answer(key) {
    if (!items.length) { return; }
    var el = items[at];
    labels[at] = words[key];
    el.querySelector(".answer").textContent = "your label: " + words[key].replace("_", " ");
    el.querySelector(".judge").hidden = false;
    show(at);
  }
  function recalls() {
    var groups = {}, recall = {};
    items.forEach(function (el, i) {
      var row = JSON.parse(el.getAttribute("data-label"));
      if (row.pick !== "answer") { return; }
      var id = JSON.stringify([row.metric, row.key, row.occurrence, row.content]);
      (groups[id] = groups[id] || {claims: row.answer_claims, at: []}).at.push(i);
    });
    Object.keys(groups).forEach(function (id) {
      var group = groups[id], supported = 0, complete = group.at.length === group.claims;
      group.at.forEach(function (i) {
        if (labels[i] === "supported") { supported += 1; }
        else if (labels[i] !== "not_supported") { complete = false; }
      });
      if (complete) {
        group.at.forEach(function (i) { recall[i] = supported / group.claims; });
      }
    });
    return recall;
  }
  function exported() {
    var recall = recalls();
    return Object.keys(labels).map(Number).sort(function (a, b) { return a - b; })
      .map(function (i) {
        var row = JSON.parse(items[i].getAttribute("data-label"));
        row.label = labels[i];
        if (i in recall) { row.human_recall = recall[i]; }
        return JSON.stringify(row);
      }).join("\\n") + "\\n";
  }
  function save() {
    var link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob([exported()], {type: "application/x-ndjson"}));
    link.download = "labels.jsonl";
    document.body.appendChild(link);
    link.click();
    link.remove();
  }
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) { return; }
    if (e.key in words) { answer(e.key); }
    else if (e.key === "ArrowRight" || e.key === "j" || e.key === "Enter") { show(at + 1); }
    else if (e.key === "ArrowLeft" || e.key === "k") { show(at - 1); }
    else if (e.key === "e") { save(); }
    else { return; }
    e.preventDefault();
  });
  document.querySelectorAll("button[data-key]").forEach(function (b) {
    b.addEventListener("click", function () { answer(b.getAttribute("data-key")); });
  });
  document.getElementById("prev").addEventListener("click", function () { show(at - 1); });
  document.getElementById("next").addEventListener("click", function () { show(at + 1); });
  document.getElementById("export").addEventListener("click", save);
  show(0);
})();
"""


def review_page(items: Sequence[ReviewItem], *, title: str = "") -> str:
    """The labelling page: one claim at a time, the judge's verdict shown once answered."""
    whole = any(item.pick == "answer" for item in items)
    use = (
        "<code>ragrecall eval --labels</code> and <code>ragrecall calibrate</code>; label "
        "every claim of each answer: an answer with a skipped claim cannot correct the mean"
        if whole
        else "<code>ragrecall calibrate</code>"
    )
    body = [
        f"<h1>ragrecall review{': ' + escape(title) if title else ''}</h1>",
        '<p class="dim">Is the claim supported by the retrieved chunks? Keys: <b>y</b> '
        "supported, <b>n</b> not supported, <b>s</b> skip; <b>&rarr;</b> / <b>&larr;</b> next "
        f"and previous; <b>e</b> export the labels (labels.jsonl, for {use}).</p>",
        '<p><span id="progress"></span> <button id="prev">&larr;</button> '
        '<button id="next">&rarr;</button> <button id="export">export labels</button></p>',
        '<p id="done" class="ok">Every item is labelled: export the labels (key e).</p>',
    ]
    if not items:
        body.append('<p class="dim">Nothing to review.</p>')
    answers = max((item.answer or 0 for item in items), default=0)
    seen: dict[int, int] = {}
    for n, item in enumerate(items, start=1):
        where = ""
        if item.answer is not None:
            seen[item.answer] = seen.get(item.answer, 0) + 1
            where = (
                f" &middot; answer {item.answer} of {answers}, claim {seen[item.answer]} of "
                f"{item.answer_claims}"
            )
        body.append(_item_html(n, len(items), item, where))
    return page(f"ragrecall review {title}", "\n".join(body), script=_REVIEW_JS, css=_REVIEW_CSS)


def _item_html(n: int, total: int, item: ReviewItem, where: str = "") -> str:
    label = escape(json.dumps(label_fields(item), ensure_ascii=False), quote=True)
    chunks = "".join(
        f'<div class="dim">chunk {escape(cid)}{" (cited)" if cid in item.chunk_ids else ""}'
        f'</div><div class="chunk">'
        f"{highlight(text, item.evidence if cid in item.chunk_ids else None)}</div>"
        for cid, text in item.chunks
    )
    if item.attributed is None:
        said = f'<span class="bad">unscorable</span>: {escape(item.reason)}'
    else:
        mark = "ok" if item.attributed else "bad"
        word = "supported" if item.attributed else "not supported"
        said = f'<span class="{mark}">{word}</span>'
        if item.p_supported is not None:
            said += f' <span class="pill">P(supported) {item.p_supported:.2f}</span>'
        if item.word_overlap is not None:
            said += f' <span class="pill">word overlap {item.word_overlap:.2f}</span>'
        said += f'<div class="dim">{escape(item.reason)}</div>'
    return (
        f'<section class="item" data-label="{label}">'
        f'<div class="dim">{n} / {total} &middot; picked: {escape(item.pick)}{where}</div>'
        f'<div class="dim">question: {escape(item.question)}</div>'
        f'<div class="claim">{escape(item.claim)}</div>'
        '<div class="keys"><button data-key="y">supported (y)</button>'
        '<button data-key="n">not supported (n)</button><button data-key="s">skip (s)</button>'
        ' <span class="answer"></span></div>'
        f'<div class="judge" hidden>the judge: {said}</div>{chunks}</section>'
    )
