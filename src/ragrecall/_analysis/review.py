"""Verdicts for a person to label: which ones (``pick_for_review``, ``pick_answers``). The
page and CSV they are labelled in are ``_report/review.py``'s.

For calibration a person labels a share of the verdicts nearest the decision (where the judge
is least sure), a random share of the others (so the agreement measured on them is unbiased),
and every claim of an unscorable sample. For a corrected mean (``eval --labels``) they label
whole answers drawn at random (``pick_answers``): every claim of each, in random order; the
page's export gives each complete answer's human recall.

A label names its sample (``key``, ``occurrence``, ``content``) and claim, the join to the
results file, and carries the judge's numbers it is compared with.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from .._core.schemas import ClaimVerdict, RecallResult
from .._metrics.decision import DEFAULT_DECISION, Decision
from .._metrics.prompts import PROMPT_VERSION
from .._running.store import Record
from .compare import task_identity

__all__ = ["ReviewItem", "pick_answers", "pick_for_review"]

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
