"""ragrecall metrics as MLflow scorers for ``mlflow.genai.evaluate``.

``RecallScorer(metric)`` turns any ragrecall ``Metric`` into a ``Scorer``; the named classes
(``ContextRecallScorer``, ...) build their metric from a judge, and ``get_scorer(name)`` by
ragrecall's metric name, as MLflow's RAGAS integration does. A call returns one ``Feedback``
per top-level RETRIEVER span of the trace (with its ``span_id``, as MLflow's retrieval judges
do), or one for the contexts in the inputs. Input the scorer cannot read and unscorable
samples are Feedback with an error, never an exception.
"""

from __future__ import annotations

import logging
from typing import Any, ClassVar

from langchain_core.language_models import BaseChatModel
from mlflow.entities import Feedback, Trace
from mlflow.genai.scorers import Scorer
from pydantic import PrivateAttr

from ragrecall import (
    ChunkRecall,
    ContextPrecision,
    ContextRecall,
    Metric,
    QuestionRecall,
    RecallPrecision,
    RecallResult,
    ResponseRecall,
    RetrievalRecall,
    Sufficiency,
)
from ragrecall.engines import metric_classes

from ._feedback import as_feedback, unscorable_feedback
from ._samples import samples_from

__all__ = [
    "ChunkRecallScorer",
    "ContextPrecisionScorer",
    "ContextRecallScorer",
    "Judge",
    "QuestionRecallScorer",
    "RecallPrecisionScorer",
    "RecallScorer",
    "ResponseRecallScorer",
    "RetrievalRecallScorer",
    "SufficiencyScorer",
    "as_judge",
    "get_scorer",
]

log = logging.getLogger("ragrecall")

# A LangChain chat model, "provider:model" (MLflow's "provider:/model" too), or None for
# ragrecall's embedded local judge.
Judge = BaseChatModel | str | None


def as_judge(judge: Judge) -> BaseChatModel | str | None:
    """ragrecall's judge for ``judge``: MLflow's model URI ``"openai:/gpt-4o-mini"`` reads as
    ragrecall's ``"openai:gpt-4o-mini"``; anything else is passed on as it is."""
    if isinstance(judge, str) and ":/" in judge and "://" not in judge:
        provider, _, model = judge.partition(":/")
        return f"{provider}:{model}"
    return judge


class RecallScorer(Scorer):
    """Any ragrecall metric as an MLflow scorer.

    Args:
        metric: a ragrecall metric, e.g. ``ContextRecall(judge=...)``.
        name: the Feedback's name; default the metric's (``context_recall``, ...).

    Call it as MLflow does: ``scorer(inputs=..., outputs=..., expectations=..., trace=...)``.
    """

    _metric: Metric[RecallResult] = PrivateAttr()

    def __init__(self, metric: Metric[RecallResult], *, name: str | None = None) -> None:
        super().__init__(name=name or metric.name, description=_description(type(metric)))
        self._metric = metric

    @property
    def metric(self) -> Metric[RecallResult]:
        return self._metric

    def __call__(
        self,
        *,
        inputs: Any = None,
        outputs: Any = None,
        expectations: dict[str, Any] | None = None,
        trace: Trace | None = None,
        session: list[Trace] | None = None,
    ) -> list[Feedback]:
        """Score each retrieval of ``trace`` (or the contexts in ``inputs``) against the
        reference in ``expectations`` (``expected_response``, or ``expected_facts``).
        ``session`` is not read: each trace is a retrieval of its own."""
        try:
            retrieved = samples_from(inputs, outputs, expectations, trace)
        except ValueError as err:
            return [unscorable_feedback(self.name, str(err), "INVALID_PARAMETER_VALUE")]
        feedbacks = []
        for item in retrieved:
            try:
                result = self._metric.score(item.sample)
            except Exception as err:  # a bug or a broken judge: a value, not a crashed batch
                log.exception("ragrecall: %s could not score a sample", self.name)
                reason = f"{type(err).__name__}: {err}"
                feedbacks.append(
                    unscorable_feedback(self.name, reason, type(err).__name__, item.span_id)
                )
                continue
            feedbacks.append(as_feedback(self.name, result, item.span_id))
        return feedbacks


def _description(metric_class: type[Metric[RecallResult]]) -> str | None:
    doc = (metric_class.__doc__ or "").strip()
    return doc.split("\n\n", 1)[0].replace("\n", " ") or None


class _NamedScorer(RecallScorer):
    """A scorer for the ragrecall metric ``metric_class``, built from a judge.

    Args:
        judge: a LangChain chat model, ``"provider:model"`` (or MLflow's ``"provider:/model"``),
            or None for the embedded local judge.
        name: the Feedback's name; default the metric's.
        **metric_kwargs: passed to the metric's constructor.
    """

    metric_class: ClassVar[type[Metric[RecallResult]]]

    def __init__(self, judge: Judge = None, *, name: str | None = None, **metric_kwargs: Any):
        super().__init__(self.metric_class(as_judge(judge), **metric_kwargs), name=name)


class ContextRecallScorer(_NamedScorer):
    """Did the retrieved documents bring back every claim of the expected response? The
    rationale lists each claim: supported by which document, with what quote, or why not."""

    metric_class = ContextRecall


class ResponseRecallScorer(_NamedScorer):
    """Does the app's response state every claim of the expected response?"""

    metric_class = ResponseRecall


class ChunkRecallScorer(_NamedScorer):
    """Does the response reflect every retrieved document relevant to the question?"""

    metric_class = ChunkRecall


class QuestionRecallScorer(_NamedScorer):
    """Do the retrieved documents answer every part of the question? (No reference needed.)
    Deprecated with QuestionRecall (building it warns): use ``SufficiencyScorer``."""

    metric_class = QuestionRecall


class SufficiencyScorer(_NamedScorer):
    """Does each part of the question have its answer, found verbatim, in the retrieved
    documents? (No reference needed.)"""

    metric_class = Sufficiency


class ContextPrecisionScorer(_NamedScorer):
    """Which share of the retrieved documents is relevant to the expected response?"""

    metric_class = ContextPrecision


class RecallPrecisionScorer(_NamedScorer):
    """Context recall and context precision in one judge pass, scored as their F1."""

    metric_class = RecallPrecision


class RetrievalRecallScorer(RecallScorer):
    """ID-based recall, no judge: the expected document ids (``reference_ids``, or the
    ``doc_uri``s of ``expected_retrieved_context``) against the retrieved documents' ids.

    Args:
        name: the Feedback's name; default ``retrieval_recall``.
        **metric_kwargs: passed to ``ragrecall.RetrievalRecall`` (``match``, ``ks``, ...).
    """

    def __init__(self, *, name: str | None = None, **metric_kwargs: Any) -> None:
        super().__init__(RetrievalRecall(**metric_kwargs), name=name)


_BY_NAME: dict[str, type[_NamedScorer]] = {
    cls.metric_class.name: cls
    for cls in (
        ContextRecallScorer,
        ResponseRecallScorer,
        ChunkRecallScorer,
        QuestionRecallScorer,
        SufficiencyScorer,
        ContextPrecisionScorer,
        RecallPrecisionScorer,
    )
}


def get_scorer(metric_name: str, judge: Judge = None, **metric_kwargs: Any) -> RecallScorer:
    """The scorer for ragrecall's metric ``metric_name`` (``"context_recall"``, ...): its named
    class, or for a metric of ragrecall's list without one, a ``RecallScorer`` of it."""
    if metric_name == RetrievalRecall.name:
        if judge is not None:
            raise ValueError("retrieval_recall compares ids and takes no judge")
        return RetrievalRecallScorer(**metric_kwargs)
    named = _BY_NAME.get(metric_name)
    if named is not None:
        return named(judge, **metric_kwargs)
    listed = {cls.name: cls for cls in metric_classes() if cls.uses_judge}
    if metric_name not in listed:
        choices = ", ".join(dict.fromkeys([*_BY_NAME, *listed, RetrievalRecall.name]))
        raise ValueError(f"unknown metric {metric_name!r}; choose from {choices}")
    return RecallScorer(listed[metric_name](as_judge(judge), **metric_kwargs))
