"""Verdicts for a person to label: which ones (``pick_for_review``, ``pick_answers``), and
the page and CSV they are labelled in.

For calibration a person labels a share of the verdicts nearest the decision (where the judge
is least sure), a random share of the others (so the agreement measured on them is unbiased),
and every claim of an unscorable sample. For a corrected mean (``eval --labels``) they label
whole answers drawn at random (``pick_answers``): every claim of each, in random order; the
page's export gives each complete answer's human recall.

The page is self-contained (no network, works from file://): each claim with its question
and chunks, the cited evidence marked, the judge's verdict hidden until the person answers;
keys ``y`` supported, ``n`` not supported, ``s`` skip; the labels are exported as JSONL for
``calibrate`` and ``eval --labels``. A label names its sample (``key``, ``occurrence``,
``content``) and claim, the join to the results file, and carries the judge's numbers it is
compared with.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from html import escape
from pathlib import Path
from typing import Literal

from .._core.schemas import ClaimVerdict, RecallResult
from .._io.cells import write_csv
from .._metrics.decision import DEFAULT_DECISION, Decision
from .._metrics.prompts import PROMPT_VERSION
from .._report.html import highlight, page
from .._running.store import Record
from .compare import task_identity

__all__ = ["ReviewItem", "pick_answers", "pick_for_review", "review_csv", "review_page"]

Pick = Literal["uncertain", "random", "unscorable", "answer"]


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
    metric: str = "context_recall"
    content: str = ""  # the sample's content digest: which retrieval
    task: str = ""  # a digest of the task identity compare pairs by
    claim_set: str | None = None
    claim_index: int = 0  # the claim's place in its answer
    answer_claims: int | None = None  # pick "answer": the answer's claims
    judge_score: float | None = None  # pick "answer": the judge's score of the answer
    answer: int | None = None  # pick "answer": the answer's number on the page


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
            for i, claim in enumerate(result.claims):
                item = _item(record, result, claim, None, "unscorable", i, metric)
                item.reason = result.reason
                failed.append(item)
        else:
            scored += [
                _item(record, result, v.claim, v, "random", i, metric)
                for i, v in enumerate(result.verdicts)
            ]
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


def pick_answers(
    records: Sequence[Record],
    metric: str = "context_recall",
    *,
    answers: int = 40,
    seed: int = 0,
) -> list[ReviewItem]:
    """``answers`` whole answers drawn at random (seeded) from those ``metric`` scored, each
    with every claim, its claims in random order: what ``eval --labels`` needs (a simple
    random sample of answers, people's recall of each).

    The draw orders the answers by a digest of the seed and the task (as ``compare`` pairs
    them), so the same seed draws the same tasks from two runs of one question set: labels of
    both runs' answers then pair. Unscorable answers are left out (the judge's mean leaves
    them out too). Raises ValueError when no record holds ``metric``."""
    if not any(metric in r.results for r in records):
        raise ValueError(f"no result for metric {metric!r} in these records")
    scored = [r for r in records if _whole(r.results.get(metric))]
    drawn = sorted(scored, key=lambda r: _draw(seed, r))[: max(answers, 0)]
    items: list[ReviewItem] = []
    for number, record in enumerate(drawn, start=1):
        result = record.results[metric]
        verdicts = list(enumerate(result.verdicts))
        random.Random(_draw(seed, record)).shuffle(verdicts)
        for index, verdict in verdicts:
            item = _item(record, result, verdict.claim, verdict, "answer", index, metric)
            item.answer_claims, item.judge_score, item.answer = len(verdicts), result.score, number
            items.append(item)
    return items


def _whole(result: RecallResult | None) -> bool:
    return (
        result is not None
        and result.score is not None
        and bool(result.verdicts)
        and len(result.verdicts) == len(result.claims)
    )


def _draw(seed: int, record: Record) -> str:
    text = f"{seed}\0{task_identity(record.sample)}\0{record.occurrence}"
    return hashlib.sha256(text.encode()).hexdigest()


def task_digest(record: Record) -> str:
    """A digest of the task ``compare`` pairs the record's sample by."""
    return hashlib.sha256(task_identity(record.sample).encode()).hexdigest()[:16]


def _margin(item: ReviewItem, decision: Decision) -> float:
    w = decision.lexical_weight
    mixed = (1 - w) * (item.p_supported or 0.0) + w * (item.word_overlap or 0.0)
    return mixed - decision.support_threshold


def _item(
    record: Record,
    result: RecallResult,
    claim: str,
    v: ClaimVerdict | None,
    pick: Pick,
    index: int,
    metric: str,
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
        metric=metric,
        content=record.content,
        task=task_digest(record),
        claim_set=result.claim_set,
        claim_index=index,
    )


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
