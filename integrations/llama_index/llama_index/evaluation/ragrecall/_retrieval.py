"""ragrecall's ID-based retrieval metrics as a LlamaIndex ``BaseRetrievalMetric``.

``RetrieverEvaluator(metrics=[RetrievalRecallMetric("recall", k=5),
RetrievalRecallMetric("ndcg", k=5)])``: each instance reports one measure of
``ragrecall``'s ``RetrievalRecall`` over the top ``k`` retrieved ids, under the name
``"ragrecall_<measure>@<k>"`` (or ``"ragrecall_<measure>"`` without ``k``), so several can
sit side by side and next to LlamaIndex's own metrics. Importing this package also registers
``ragrecall_recall``, ``ragrecall_hit_rate``, ``ragrecall_mrr`` and ``ragrecall_ndcg`` in
LlamaIndex's metric registry, for ``RetrieverEvaluator.from_metric_names([...])``.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from llama_index.core.evaluation.retrieval.metrics import METRIC_REGISTRY
from llama_index.core.evaluation.retrieval.metrics_base import (
    BaseRetrievalMetric,
    RetrievalMetricResult,
)
from pydantic import ConfigDict, Field, PrivateAttr

from ragrecall import RetrievalRecall, Sample

__all__ = ["Measure", "RetrievalRecallMetric"]

Measure = Literal["recall", "hit_rate", "mrr", "ndcg"]


class RetrievalRecallMetric(BaseRetrievalMetric):
    """One of ragrecall's retrieval measures over the top ``k`` retrieved ids.

    Args:
        measure: ``"recall"`` (relevant ids retrieved / relevant ids), ``"hit_rate"``,
            ``"mrr"`` (1 / rank of the first relevant id) or ``"ndcg"`` (binary gains,
            normalised by the ideal list of the same length).
        k: cut-off; None scores the whole retrieved list.
        **kwargs: the other fields: ``ndcg_ideal`` is ``"retrieved"`` (ragrecall's nDCG: the
            ideal list is as long as the retrieved one) or ``"relevant"`` (LlamaIndex's:
            every expected id). They differ when fewer ids are retrieved than expected:
            expected [a, b, c], retrieved [c, x] gives 0.613 and 0.469
            (``ragrecall.RetrievalRecall``'s ``ndcg`` has the formula).

    An id retrieved twice counts once, at its first rank. The result's metadata holds the
    rank of each expected id (None when not retrieved).
    """

    model_config = ConfigDict(extra="forbid")  # a misspelt keyword is an error, not ignored

    measure: Measure = Field("recall", description="Which measure to report.")
    k: int | None = Field(None, ge=1, description="Cut-off; None for the whole list.")
    ndcg_ideal: Literal["retrieved", "relevant"] = Field(
        "retrieved", description="What nDCG is normalised by."
    )
    _metric: RetrievalRecall = PrivateAttr()

    def __init__(self, measure: Measure = "recall", k: int | None = None, **kwargs: Any):
        super().__init__(measure=measure, k=k, **kwargs)
        self._metric = RetrievalRecall(match="ids", ndcg_ideal=self.ndcg_ideal)

    # LlamaIndex declares ``metric_name`` a ClassVar; RetrieverEvaluator keys results by it,
    # so it is per instance here to tell recall@3 from recall@10.
    @property
    def metric_name(self) -> str:  # type: ignore[override]
        suffix = f"@{self.k}" if self.k is not None else ""
        return f"ragrecall_{self.measure}{suffix}"

    def compute(
        self,
        query: str | None = None,
        expected_ids: list[str] | None = None,
        retrieved_ids: list[str] | None = None,
        expected_texts: list[str] | None = None,
        retrieved_texts: list[str] | None = None,
        **kwargs: Any,
    ) -> RetrievalMetricResult:
        """Score ``retrieved_ids`` against ``expected_ids``; raises ValueError without them,
        as LlamaIndex's metrics do."""
        if retrieved_ids is None or not expected_ids:
            raise ValueError("Retrieved ids and expected ids must be provided")
        top = list(retrieved_ids)[: self.k] if self.k is not None else list(retrieved_ids)
        sample = Sample(user_input=query, retrieved_ids=top, reference_ids=list(expected_ids))
        result = self._metric.measure(sample)
        value = getattr(result, self.measure)
        if result.score is None or value is None:
            raise ValueError(f"{self.metric_name} is undefined here: {result.reason}")
        return RetrievalMetricResult(
            score=float(value),
            metadata={
                "k": self.k,
                "retrieved": len(top),
                "ranks": {item.id: item.rank for item in result.items},
            },
        )


def _registered(measure: Measure) -> type[RetrievalRecallMetric]:
    """A class LlamaIndex's registry can build with no arguments: this one measure."""

    class Registered(RetrievalRecallMetric):
        def __init__(self, k: int | None = None, **kwargs: Any):
            super().__init__(measure, k, **kwargs)

    Registered.__name__ = Registered.__qualname__ = f"RetrievalRecall_{measure}"
    return Registered


for _measure in get_args(Measure):
    METRIC_REGISTRY[f"ragrecall_{_measure}"] = _registered(_measure)
