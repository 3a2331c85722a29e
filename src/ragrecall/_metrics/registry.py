"""Metric classes by name.

Each metric class declares its ``name`` and ``result_type``; defining the class registers it
(``Metric.__init_subclass__``). The CLI, ``testing``, the results file and the cost estimate
look metrics up here, so a metric's name is written once, on its class. The built-in
metrics are imported here, so each is registered whatever was imported before (the top level
imports lazily).
"""

from __future__ import annotations

from collections.abc import Sequence

from .._core.schemas import RecallResult
from .._judge.resolve import JudgeLike, resolve_judge
from . import (  # noqa: F401  (defining each class registers it)
    chunk_recall,
    context_precision,
    context_recall,
    question_recall,
    recall_precision,
    response_recall,
    retrieval_recall,
)
from .base import Metric, MetricOptions

__all__ = [
    "MetricOptions",
    "build_metrics",
    "metric_class",
    "metric_names",
    "result_type",
]

_CLASSES = Metric.registered


def metric_names() -> tuple[str, ...]:
    """Every registered metric name, in registration order."""
    return tuple(_CLASSES)


def metric_class(name: str) -> type[Metric[RecallResult]]:
    """The class registered as ``name``; ValueError naming the choices when there is none."""
    try:
        return _CLASSES[name]
    except KeyError:
        raise ValueError(
            f"unknown metric {name!r}; choose from {', '.join(metric_names())}"
        ) from None


def result_type(name: str) -> type[RecallResult]:
    """The result model of the metric ``name`` (RecallResult for a name not registered)."""
    cls = _CLASSES.get(name)
    return cls.result_type if cls is not None else RecallResult


def build_metrics(
    names: Sequence[str], judge: JudgeLike, options: MetricOptions | None = None
) -> list[Metric[RecallResult]]:
    """Metric objects by name, sharing one judge (resolved once when any metric needs it)."""
    options = options or MetricOptions()
    classes = [metric_class(name) for name in names]
    shared = resolve_judge(judge) if any(c.uses_judge for c in classes) else judge
    return [cls.from_options(shared, options) for cls in classes]
