"""ragrecall metrics as phoenix-evals evaluators, for ``evaluate_dataframe`` and Phoenix
experiments.

The row's fields: ``reference`` (the reference answer), ``context`` (the retrieved documents:
a list of strings or document dicts, or one string), and optionally ``input`` (the question)
and ``output`` (the app's response); map other column names with phoenix-evals'
``bind_evaluator(evaluator, {"context": "retrieved"})``. An unscorable row is a Score with no
score, the label ``unscorable`` and the reason as its explanation, never an exception.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.language_models import BaseChatModel
from phoenix.evals import Evaluator, Score
from pydantic import BaseModel, Field, ValidationError

from ragrecall import (
    Metric,
    RecallResult,
    RetrievalRecall,
    Sample,
)
from ragrecall.adapters import claim_metadata, error_type, explanation
from ragrecall.engines import metric_classes

__all__ = ["RecallEvaluator", "RecallInput", "explanation"]

Judge = BaseChatModel | str | None

# every metric of ragrecall's list that takes a judge, by name
_METRICS: dict[str, type[Metric[RecallResult]]] = {
    cls.name: cls for cls in metric_classes() if cls.uses_judge
}


class RecallInput(BaseModel):
    """One row for a ragrecall evaluator."""

    reference: str | None = Field(None, description="The reference answer.")
    context: list[Any] | str | None = Field(
        None, description="The retrieved documents: texts or document dicts, best first."
    )
    input: str | None = Field(None, description="The question.")
    output: str | None = Field(None, description="The app's response.")


class RecallEvaluator(Evaluator):
    """A ragrecall metric as a phoenix-evals ``Evaluator``.

    Args:
        metric: a ragrecall metric object, or a metric's name (``"context_recall"``, ...)
            built with ``judge`` and ``metric_kwargs``.
        judge: a LangChain chat model, ``"provider:model"``, or None for the embedded judge.
        name: the Score's name; default the metric's.
    """

    def __init__(
        self,
        metric: Metric[RecallResult] | str = "context_recall",
        judge: Judge = None,
        *,
        name: str | None = None,
        **metric_kwargs: Any,
    ) -> None:
        self._metric = (
            metric if isinstance(metric, Metric) else _build(metric, judge, metric_kwargs)
        )
        super().__init__(
            name=name or self._metric.name,
            kind="code" if not type(self._metric).uses_judge else "llm",
            direction="maximize",
            input_schema=RecallInput,
        )

    @property
    def metric(self) -> Metric[RecallResult]:
        return self._metric

    def _evaluate(self, eval_input: dict[str, Any]) -> list[Score]:
        try:
            sample = _sample(eval_input)
        except (ValidationError, ValueError) as err:
            return [self._unscorable(f"invalid input: {err}", "INVALID_INPUT")]
        result = self._metric.score(sample)
        if result.status == "unscorable":
            return [self._unscorable(result.reason, error_type(result) or "_OTHER", result)]
        return [
            Score(
                name=self.name,
                score=result.score,
                # names the agent step of each claim's chunk, where chunks carry them
                explanation=explanation(result, sample),
                metadata=_metadata(result, sample),
                kind=self.kind,
                direction=self.direction,
            )
        ]

    def _unscorable(self, reason: str, code: str, result: RecallResult | None = None) -> Score:
        metadata = _metadata(result) if result is not None else {"source": "ragrecall"}
        return Score(
            name=self.name,
            label="unscorable",
            explanation=f"Unscorable: {reason}",
            metadata={**metadata, "error.type": code},
            kind=self.kind,
            direction=self.direction,
        )


def _build(name: str, judge: Judge, options: dict[str, Any]) -> Metric[RecallResult]:
    if name == RetrievalRecall.name:
        return RetrievalRecall(**options)
    try:
        return _METRICS[name](judge, **options)
    except KeyError:
        choices = ", ".join([*_METRICS, RetrievalRecall.name])
        raise ValueError(f"unknown metric {name!r}; choose from {choices}") from None


def _sample(eval_input: dict[str, Any]) -> Sample:
    context = eval_input.get("context")
    if isinstance(context, str):
        try:
            context = json.loads(context)  # a JSON list, as a CSV cell holds one
        except ValueError:
            context = [context]  # one passage
    documents = [_document(d) for d in context or []]
    return Sample.model_validate(
        {
            "user_input": eval_input.get("input"),
            "reference": eval_input.get("reference"),
            "response": eval_input.get("output"),
            "retrieved_contexts": documents,
        }
    )


def _document(value: Any) -> Any:
    """A document dict as a chunk: OpenInference's ``document.content`` / ``document.id``
    keys (as Phoenix's span exports have them) read as ``text`` / ``id``."""
    if not isinstance(value, dict):
        return value
    renamed = {key.removeprefix("document."): item for key, item in value.items()}
    if "content" in renamed and "text" not in renamed and "page_content" not in renamed:
        renamed["text"] = renamed.pop("content")
    return {
        k: v for k, v in renamed.items() if k in ("id", "text", "page_content", "score", "metadata")
    }


def _metadata(result: RecallResult, sample: Sample | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"source": "ragrecall", "metric": result.metric}
    if result.claims:
        metadata["claims"] = len(result.claims)
        metadata["missing"] = result.missing
    if result.verdicts:
        metadata["verdicts"] = claim_metadata(result, sample)
    if result.claim_set is not None:
        metadata["claim_set"] = result.claim_set
    return metadata
