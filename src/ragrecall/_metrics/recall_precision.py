"""Recall and precision of the retrieved contexts in one report: RecallPrecision runs
ContextRecall and ContextPrecision on the same sample, through their own steps, and reports
precision, recall and F1."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel

from .._core.results import RecallPrecisionResult
from .._core.schemas import Sample, Usage
from .._judge.drive import Steps
from .._judge.resolve import JudgeLike
from .._judge.retry import DEFAULT_TIMEOUT
from .base import Metric, MetricOptions
from .chunk_judged import ChunkStrategy
from .claims.decompose import ClaimCache, ClaimMode
from .context_precision import ContextPrecision
from .context_recall import ContextRecall
from .verdicts.attribution import Strategy

__all__ = ["RecallPrecision"]


class RecallPrecision(Metric[RecallPrecisionResult]):
    """Recall and precision of the retrieved contexts in one report; score = their F1.

    Runs ContextRecall (claims of the reference supported by the chunks) and ContextPrecision
    (chunks relevant to the question) on the same sample, through their own steps, sharing one
    judge and one usage count. ``missing`` lists the unsupported claims. A sample one of them
    cannot score is unscorable, except that an empty retrieval scores 0 (recall is 0, so F1 is
    0 whatever precision would be).

    Args:
        judge: shared by both parts (built on first use) unless you pass the parts.
        claims: passed to the ContextRecall it builds.
        strategy: passed to the ContextRecall it builds (``"auto"`` also picks
            ContextPrecision's).
        cache: passed to the ContextRecall it builds.
        recall: a ready-made ContextRecall, to configure it fully.
        precision: a ready-made ContextPrecision, likewise.
    """

    name = "recall_precision"
    needs = (("reference", "reference_claims"), ("retrieved_contexts",))
    result_type = RecallPrecisionResult
    cost_parts = frozenset({"claims", "chunks"})

    def __init__(
        self,
        judge: JudgeLike = None,
        claims: ClaimMode = "atomic",
        *,
        strategy: Strategy | Literal["auto"] = "auto",
        cache: ClaimCache | None = None,
        cache_path: str | Path | None = None,
        recall: ContextRecall | None = None,
        precision: ContextPrecision | None = None,
        max_retries: int = 3,
        timeout: float = DEFAULT_TIMEOUT,
    ):
        super().__init__(judge, max_retries=max_retries, timeout=timeout)
        self._recall = recall
        self._precision = precision
        self._claims = claims
        self._strategy = strategy
        self._cache = cache
        self._cache_path = cache_path

    @classmethod
    def from_options(cls, judge: JudgeLike, options: MetricOptions) -> RecallPrecision:
        strategy: Strategy | Literal["auto"] = (
            "batched" if options.strategy == "batched" else "auto"
        )
        return cls(
            judge, options.claims, strategy=strategy, cache=options.claim_cache, **options.policy()
        )

    @property
    def judge(self) -> BaseChatModel:
        given = self._recall or self._precision
        if self._judge_spec is None and given is not None:
            return given.judge
        return super().judge

    @property
    def recall(self) -> ContextRecall:
        if self._recall is None:
            self._recall = ContextRecall(
                self.judge,
                self._claims,
                strategy=self._strategy,
                cache=self._cache,
                cache_path=self._cache_path,
            )
        return self._recall

    @property
    def precision(self) -> ContextPrecision:
        if self._precision is None:
            strategy: ChunkStrategy | Literal["auto"] = "auto"
            if self._strategy != "auto":
                strategy = "per_chunk" if self._strategy == "per_claim" else "batched"
            self._precision = ContextPrecision(self.judge, strategy=strategy)
        return self._precision

    def _steps(self, sample: Sample, usage: Usage) -> Steps[RecallPrecisionResult]:
        recall = yield from self.recall._steps(sample, usage)
        if recall.score is None:
            return self.unscorable(f"recall: {recall.reason}")
        detail: dict[str, Any] = {
            "recall": recall.score,
            "claims": recall.claims,
            "verdicts": recall.verdicts,
            "missing": recall.missing,
            "claim_set": recall.claim_set,
        }
        if not any(c.text.strip() for c in sample.retrieved_contexts):
            return RecallPrecisionResult(
                metric=self.name,
                score=0.0,
                status="scored",
                reason="no retrieved contexts: recall is 0, precision undefined, F1 0",
                f1=0.0,
                **detail,
            )
        precision = yield from self.precision._steps(sample, usage)
        if precision.score is None:
            return self.unscorable(f"precision: {precision.reason}", **detail)
        p, r = precision.score, recall.score
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        return RecallPrecisionResult(
            metric=self.name,
            score=f1,
            status="scored",
            reason="; ".join(x for x in (recall.reason, precision.reason) if x),
            precision=p,
            average_precision=precision.average_precision,
            f1=f1,
            chunks=precision.chunks,
            **detail,
        )
