"""Verdicts for a person to label: which ones (``pick_for_review``), and the page and CSV
they are labelled in.

A person labels a share of the verdicts nearest the decision (where the judge is least sure),
a random share of the others (so the agreement measured on them is unbiased), and every claim
of an unscorable sample. The page is self-contained (no network, works from file://): each
claim with its question and chunks, the cited evidence marked, the judge's verdict hidden until
the person answers; keys ``y`` supported, ``n`` not supported, ``s`` skip; the labels are
exported as JSONL for ``calibrate``. A label names its sample (``key``, ``occurrence``) and
claim, the join to the results file, and carries the judge's numbers it is compared with.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from html import escape
from pathlib import Path
from typing import Literal

from .._csv_cells import write_csv
from .._html import highlight, page
from .._metrics.decision import DEFAULT_DECISION, Decision
from .._results_file import Record
from .._schemas import ClaimVerdict, RecallResult
from ..prompts import PROMPT_VERSION

__all__ = ["ReviewItem", "pick_for_review", "review_csv", "review_page"]

Pick = Literal["uncertain", "random", "unscorable"]


@dataclass
class ReviewItem:
    """One claim to label, with what the judge said of it."""

    key: str
    occurrence: int
    claim: str
    pick: Pick
    question: str = ""
    sample_id: str | None = None
    attributed: bool | None = None  # None: the sample was unscorable
    p_supported: float | None = None
    word_overlap: float | None = None
    chunk_ids: list[str] = field(default_factory=list)
    evidence: str | None = None
    reason: str = ""
    judge: str = ""
    prompt_version: str = PROMPT_VERSION
    chunks: list[tuple[str, str]] = field(default_factory=list)  # (id, text), cited first


def judge_of(result: RecallResult) -> str:
    """The judge id (``Metric.judge_id()``: provider and model) that produced ``result``."""
    return "" if result.judge is None else f"{result.judge.provider}:{result.judge.model}"


def pick_for_review(
    records: Sequence[Record],
    metric: str = "context_recall",
    *,
    uncertain: int = 40,
    random_share: int = 40,
    seed: int = 0,
    decision: Decision = DEFAULT_DECISION,
) -> list[ReviewItem]:
    """The ``uncertain`` verdicts nearest ``decision`` (those with P(supported)), then
    ``random_share`` drawn at random (seeded) from the rest, then every claim of an unscorable
    sample. Raises ValueError when no record holds ``metric``."""
    scored: list[ReviewItem] = []
    failed: list[ReviewItem] = []
    found = False
    for record in sorted(records, key=lambda r: r.index):
        result = record.results.get(metric)
        if result is None:
            continue
        found = True
        if result.status == "unscorable":
            for claim in result.claims:
                item = _item(record, result, claim, None, "unscorable")
                item.reason = result.reason
                failed.append(item)
        else:
            scored += [_item(record, result, v.claim, v, "random") for v in result.verdicts]
    if not found:
        raise ValueError(f"no result for metric {metric!r} in these records")
    with_p = [i for i in scored if i.p_supported is not None]
    with_p.sort(key=lambda i: abs(_margin(i, decision)))
    chosen = with_p[: max(uncertain, 0)]
    for item in chosen:
        item.pick = "uncertain"
    taken = {id(i) for i in chosen}
    rest = [i for i in scored if id(i) not in taken]
    chosen += random.Random(seed).sample(rest, min(max(random_share, 0), len(rest)))
    return chosen + failed


def _margin(item: ReviewItem, decision: Decision) -> float:
    w = decision.lexical_weight
    mixed = (1 - w) * (item.p_supported or 0.0) + w * (item.word_overlap or 0.0)
    return mixed - decision.support_threshold


def _item(
    record: Record, result: RecallResult, claim: str, v: ClaimVerdict | None, pick: Pick
) -> ReviewItem:
    cited = [] if v is None else v.chunk_ids
    chunks = {c.id: c.text for c in record.sample.retrieved_contexts}
    if "response" in cited and record.sample.response is not None:
        chunks["response"] = record.sample.response
    order = [c for c in cited if c in chunks] + [c for c in chunks if c not in cited]
    return ReviewItem(
        key=record.key,
        occurrence=record.occurrence,
        claim=claim,
        pick=pick,
        question=record.sample.user_input or "",
        sample_id=record.sample.sample_id,
        attributed=None if v is None else v.attributed,
        p_supported=None if v is None else v.p_supported,
        word_overlap=None if v is None else v.word_overlap,
        chunk_ids=list(cited),
        evidence=None if v is None else v.evidence,
        reason=result.reason if v is None else v.reason,
        judge=judge_of(result),
        chunks=[(c, chunks[c]) for c in order],
    )


def label_fields(item: ReviewItem) -> dict[str, object]:
    """What a label carries besides the person's answer (the page's export, the CSV)."""
    value = asdict(item)
    for name in ("chunks", "question", "reason", "evidence", "chunk_ids"):
        value.pop(name)
    return value


CSV_COLUMNS = [
    "key", "occurrence", "sample_id", "question", "claim", "label", "pick", "attributed",
    "p_supported", "word_overlap", "chunk_ids", "evidence", "reason", "judge", "prompt_version",
]  # fmt: skip


def review_csv(items: Sequence[ReviewItem], path: str | Path) -> None:
    """The items as CSV, for a spreadsheet: fill the ``label`` column with supported,
    not_supported or skip (blank is skip); ``calibrate`` reads the file back. Cells that a
    spreadsheet would run as a formula are marked with a leading ``'`` (``write_csv``)."""
    write_csv(path, CSV_COLUMNS, (_csv_row(item) for item in items))


def _csv_row(item: ReviewItem) -> dict[str, object]:
    row = {**asdict(item), "label": ""}
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
  function exported() {
    return Object.keys(labels).map(Number).sort(function (a, b) { return a - b; })
      .map(function (i) {
        var row = JSON.parse(items[i].getAttribute("data-label"));
        row.label = labels[i];
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
    body = [
        f"<h1>ragrecall review{': ' + escape(title) if title else ''}</h1>",
        '<p class="dim">Is the claim supported by the retrieved chunks? Keys: <b>y</b> '
        "supported, <b>n</b> not supported, <b>s</b> skip; <b>&rarr;</b> / <b>&larr;</b> next "
        "and previous; <b>e</b> export the labels (labels.jsonl, for <code>ragrecall "
        "calibrate</code>).</p>",
        '<p><span id="progress"></span> <button id="prev">&larr;</button> '
        '<button id="next">&rarr;</button> <button id="export">export labels</button></p>',
        '<p id="done" class="ok">Every item is labelled: export the labels (key e).</p>',
    ]
    if not items:
        body.append('<p class="dim">Nothing to review.</p>')
    for n, item in enumerate(items, start=1):
        body.append(_item_html(n, len(items), item))
    return page(f"ragrecall review {title}", "\n".join(body), script=_REVIEW_JS, css=_REVIEW_CSS)


def _item_html(n: int, total: int, item: ReviewItem) -> str:
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
        f'<div class="dim">{n} / {total} &middot; picked: {escape(item.pick)}</div>'
        f'<div class="dim">question: {escape(item.question)}</div>'
        f'<div class="claim">{escape(item.claim)}</div>'
        '<div class="keys"><button data-key="y">supported (y)</button>'
        '<button data-key="n">not supported (n)</button><button data-key="s">skip (s)</button>'
        ' <span class="answer"></span></div>'
        f'<div class="judge" hidden>the judge: {said}</div>{chunks}</section>'
    )
