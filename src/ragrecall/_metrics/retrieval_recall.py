"""Retrieval recall without a judge: known relevant items against the retrieved list.

Two ways to know what is relevant:

* ids: ``reference_ids`` (the relevant document ids) against ``retrieved_ids``, or the chunk
  ids of ``retrieved_contexts`` when ``retrieved_ids`` is not given;
* text: ``reference_contexts`` (relevant passages) against the retrieved chunks' text; a
  passage counts as retrieved at the first rank whose chunk is similar enough (rapidfuzz,
  normalised to [0, 1], at or above ``similarity``).

``reference_contexts`` and graded ``relevance`` (document id -> grade, for nDCG) are fields of
``Sample``. Relevant ids missing from
``relevance`` get grade 1; without ``reference_ids``, the ids graded above 0 are the relevant
ones.

Every number is per sample (averaged over a dataset by ``evaluate``): recall, recall@k for the
k not beyond the retrieved count, hit rate (1 if any relevant item was retrieved), reciprocal
rank (MRR once averaged) and nDCG over the retrieved list with linear gains,
``sum(grade / log2(rank + 1))``, normalised by the ideal ordering truncated to the same length.
An item is credited once, at its first rank.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

from rapidfuzz import fuzz

from .._core.deprecation import renamed
from .._core.results import RelevantItem, RetrievalResult
from .._core.schemas import Sample, Usage
from .._judge.drive import Steps
from .base import Metric
from .text.words import normalize

__all__ = ["DEFAULT_KS", "RetrievalRecall", "ndcg"]

DEFAULT_KS = (1, 3, 5, 10, 20)

Match = Literal["auto", "ids", "text"]
Scorer = Literal["ratio", "partial_ratio", "token_set_ratio"]
NdcgIdeal = Literal["retrieved", "relevant"]


class RetrievalRecall(Metric[RetrievalResult]):
    """Which known-relevant documents (or passages) did the retriever return, and how high?

    Score = recall (relevant items retrieved / relevant items); the result also carries
    ``recall_at``, ``hit_rate``, ``mrr``, ``ndcg`` and one ``RelevantItem`` per relevant item.
    No judge.

    Args:
        match: ``"ids"``, ``"text"``, or ``"auto"`` (ids when the sample has
            ``reference_ids`` or ``relevance``, else text when it has ``reference_contexts``).
        ks: cut-offs for ``recall_at``; those above the retrieved count are left out.
        similarity: text matching: the similarity in [0, 1] at which a chunk matches a passage.
        scorer: text matching: the rapidfuzz scorer (``"ratio"``: normalised Levenshtein, as
            RAGAS' non-LLM context recall; ``"partial_ratio"``: best-matching substring, for
            chunks cut at other boundaries than the passages).
        ndcg_ideal: what nDCG is normalised by (see ``ndcg``): ``"retrieved"`` (the ideal list
            as long as the retrieved one) or ``"relevant"`` (every relevant item, as
            LlamaIndex's NDCG does).
    """

    name = "retrieval_recall"
    needs = (
        ("reference_ids", "relevance", "reference_contexts"),
        ("retrieved_ids", "retrieved_contexts"),
    )
    result_type = RetrievalResult
    uses_judge = False

    def __init__(
        self,
        *,
        match: Match = "auto",
        ks: Sequence[int] = DEFAULT_KS,
        similarity: float = 0.5,
        scorer: Scorer = "ratio",
        ndcg_ideal: NdcgIdeal = "retrieved",
        threshold: float | None = None,
    ):
        super().__init__(None)
        similarity = renamed("threshold=", "similarity=", threshold, similarity)
        if match not in ("auto", "ids", "text"):
            raise ValueError(f"match must be 'auto', 'ids' or 'text', not {match!r}")
        if not 0.0 <= similarity <= 1.0:
            raise ValueError(f"similarity must be in [0, 1], not {similarity}")
        if any(k < 1 for k in ks):
            raise ValueError(f"ks must be positive, got {list(ks)}")
        if scorer not in ("ratio", "partial_ratio", "token_set_ratio"):
            raise ValueError(f"unknown scorer {scorer!r}")
        if ndcg_ideal not in ("retrieved", "relevant"):
            raise ValueError(f"ndcg_ideal must be 'retrieved' or 'relevant', not {ndcg_ideal!r}")
        self.match = match
        self.ks = sorted(set(ks))
        self.similarity = similarity
        self.scorer = scorer
        self.ndcg_ideal = ndcg_ideal

    @property
    def threshold(self) -> float:
        """Deprecated: ``similarity``."""
        return renamed("threshold", "similarity", self.similarity, 0.0)

    def _steps(self, sample: Sample, usage: Usage) -> Steps[RetrievalResult]:
        return self.measure(sample)
        yield  # a generator that makes no judge call

    def measure(self, sample: Sample) -> RetrievalResult:
        """The result for ``sample``, computed directly (no timing or usage)."""
        grades = dict(sample.relevance or {})
        passages = sample.reference_contexts
        match = self.match
        if match == "auto":
            if sample.reference_ids is not None or grades:
                match = "ids"
            elif passages is not None:
                match = "text"
            else:
                return self.unscorable(
                    "nothing known to be relevant: give reference_ids (or relevance), or "
                    "reference_contexts to match by text"
                )
        if match == "ids":
            return self._by_ids(sample, grades)
        return self._by_text(sample, passages or [])

    def _by_ids(self, sample: Sample, grades: dict[str, float]) -> RetrievalResult:
        relevant = _unique(sample.reference_ids or [g for g, v in grades.items() if v > 0])
        if not relevant:
            return self.unscorable(
                "no relevant ids: reference_ids is empty, so recall is undefined"
            )
        if sample.retrieved_ids is not None:
            retrieved = [str(i) for i in sample.retrieved_ids]
        else:
            retrieved = [c.id for c in sample.retrieved_contexts]
        first: dict[str, int] = {}
        for rank, doc in enumerate(retrieved, start=1):
            first.setdefault(doc, rank)
        items = [
            RelevantItem(
                id=doc,
                grade=grades.get(doc, 1.0),
                retrieved=doc in first,
                rank=first.get(doc),
            )
            for doc in relevant
        ]
        return self._scored("ids", items, len(retrieved))

    def _by_text(self, sample: Sample, passages: Sequence[str]) -> RetrievalResult:
        passages = _unique(passages)
        if not passages:
            return self.unscorable("no reference_contexts: recall is undefined")
        chunks = [c for c in sample.retrieved_contexts if c.text.strip()]
        similarity = getattr(fuzz, self.scorer)
        items = []
        for number, passage in enumerate(passages, start=1):
            scores = [similarity(passage, c.text, processor=normalize) / 100 for c in chunks]
            hit = next((i for i, s in enumerate(scores) if s >= self.similarity), None)
            best = max(scores, default=None)
            items.append(
                RelevantItem(
                    id=str(number),
                    text=passage,
                    retrieved=hit is not None,
                    rank=None if hit is None else hit + 1,
                    chunk_id=None if hit is None else chunks[hit].id,
                    similarity=best if hit is None else scores[hit],
                )
            )
        return self._scored("text", items, len(chunks))

    def _scored(
        self, match: Literal["ids", "text"], items: list[RelevantItem], retrieved: int
    ) -> RetrievalResult:
        ranks = [item.rank for item in items if item.rank is not None]
        recall = len(ranks) / len(items)
        return RetrievalResult(
            metric=self.name,
            score=recall,
            status="scored",
            reason="" if retrieved else "nothing retrieved",
            match=match,
            items=items,
            retrieved_count=retrieved,
            recall=recall,
            recall_at={
                k: sum(r <= k for r in ranks) / len(items) for k in self.ks if k <= retrieved
            },
            hit_rate=1.0 if ranks else 0.0,
            mrr=1 / min(ranks) if ranks else 0.0,
            ndcg=ndcg(items, retrieved, self.ndcg_ideal),
            missing=[item.text or item.id for item in items if not item.retrieved],
        )


def ndcg(items: Sequence[RelevantItem], retrieved: int, ideal: NdcgIdeal = "retrieved") -> float:
    """nDCG = DCG / IDCG with DCG = sum over ranks r of gain(r) / log2(r + 1), where each rank
    gains the highest grade of the items first retrieved there.

    IDCG puts the best grades first, over as many ranks as were retrieved (``ideal=
    "retrieved"``, ragrecall's default: a list that holds only relevant items scores 1), or
    over every relevant item (``"relevant"``, LlamaIndex's NDCG: a short list is penalised for
    the relevant items it had no room for). Expected [a, b, c], retrieved [c, x]: 1 / (1 +
    1/log2 3) = 0.613 by the first, 1 / (1 + 1/log2 3 + 1/2) = 0.469 by the second."""
    gains: dict[int, float] = {}
    for item in items:
        if item.rank is not None:
            gains[item.rank] = max(gains.get(item.rank, 0.0), item.grade)
    dcg = sum(gain / math.log2(rank + 1) for rank, gain in gains.items())
    best = sorted((item.grade for item in items), reverse=True)
    ideal_gains = best[:retrieved] if ideal == "retrieved" else best
    idcg = sum(gain / math.log2(rank + 1) for rank, gain in enumerate(ideal_gains, start=1))
    return dcg / idcg if idcg > 0 else 0.0


def _unique(values: Sequence[Any]) -> list[str]:
    seen: dict[str, None] = {}
    for value in values:
        text = str(value).strip()
        if text:
            seen.setdefault(text, None)
    return list(seen)
