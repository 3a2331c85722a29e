"""A ragrecall metric for classic ``mlflow.evaluate`` (``extra_metrics=[make_metric(...)]``).

MLflow hands the metric columns by parameter name: ``predictions`` (the app's answers),
``targets`` (the reference answers: ``mlflow.evaluate(targets=...)``), ``context`` (the
retrieved texts per row: a list of strings or of document dicts) and ``inputs`` (the
questions); map other column names with ``evaluator_config={"col_mapping": {"context":
"retrieved"}}``. Each row gets its score (None where unscorable, never NaN) and its
per-claim justification; ``aggregate_results`` holds the mean over the scored rows and the
count of unscorable ones.
"""

from __future__ import annotations

import json
from typing import Any

from mlflow.metrics import MetricValue
from mlflow.metrics import make_metric as mlflow_make_metric
from mlflow.models import EvaluationMetric

from ragrecall import Metric, RecallResult, Sample, evaluate

from ._feedback import rationale
from ._samples import chunks
from ._scorers import Judge, get_scorer

__all__ = ["make_metric"]


def make_metric(
    metric: str | Metric[RecallResult] = "context_recall",
    judge: Judge = None,
    *,
    name: str | None = None,
    **metric_kwargs: Any,
) -> EvaluationMetric:
    """An ``EvaluationMetric`` scoring each row with ragrecall's ``metric`` (a name such as
    ``"context_recall"``, built with ``judge`` and ``metric_kwargs``, or a Metric object)."""
    scorer_metric = (
        metric if isinstance(metric, Metric) else get_scorer(metric, judge, **metric_kwargs).metric
    )

    def eval_fn(
        predictions: Any, targets: Any = None, context: Any = None, inputs: Any = None
    ) -> MetricValue:
        rows = len(predictions)
        samples: list[Sample | str] = [
            _sample(i, predictions, targets, context, inputs) for i in range(rows)
        ]
        valid = [s for s in samples if isinstance(s, Sample)]
        report = evaluate(valid, [scorer_metric], show_progress=False) if valid else None
        results = iter(report.results[scorer_metric.name] if report is not None else [])
        scores: list[float | None] = []
        justifications: list[str] = []
        for sample in samples:
            if isinstance(sample, str):
                scores.append(None)
                justifications.append(f"Unscorable: {sample}")
                continue
            result = next(results)
            scores.append(result.score)
            justifications.append(
                rationale(result) if result.score is not None else f"Unscorable: {result.reason}"
            )
        scored = [s for s in scores if s is not None]
        aggregates = {"unscorable": float(len(scores) - len(scored))}
        if scored:
            aggregates["mean"] = sum(scored) / len(scored)
        return MetricValue(
            scores=scores,  # type: ignore[arg-type]  # None: unscorable, never NaN
            justifications=justifications,
            aggregate_results=aggregates,
        )

    made: EvaluationMetric = mlflow_make_metric(  # type: ignore[no-untyped-call]
        eval_fn=eval_fn,
        greater_is_better=True,
        name=name or scorer_metric.name,
        metric_details=(type(scorer_metric).__doc__ or "").strip().split("\n\n", 1)[0],
    )
    return made


def _sample(row: int, predictions: Any, targets: Any, context: Any, inputs: Any) -> Sample | str:
    """The row's sample, or why it has none."""
    try:
        cell = _cell(context, row)
        if isinstance(cell, str):
            try:
                cell = json.loads(cell)
            except ValueError:
                cell = [cell]  # one passage
        return Sample(
            user_input=_text(_cell(inputs, row)),
            reference=_text(_cell(targets, row)),
            response=_text(_cell(predictions, row)),
            retrieved_contexts=chunks(cell),
        )
    except ValueError as err:
        return f"row {row}: {err}"


def _cell(column: Any, row: int) -> Any:
    if column is None:
        return None
    value = column.iloc[row] if hasattr(column, "iloc") else column[row]
    return None if isinstance(value, float) and value != value else value  # NaN: empty


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, default=str, ensure_ascii=False)
