"""Old entry points kept for one minor version: they work, warn, and call the new ones."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ._judge.resolve import JudgeLike
from ._running.engines.batch.engine import BatchEngine, MetricFactory
from ._running.run import EvaluationReport, evaluate

__all__ = ["evaluate_batch"]


def evaluate_batch(
    dataset: Any,
    metrics: Sequence[str | MetricFactory] = ("context_recall",),
    *,
    judge: JudgeLike,
    out: str | Path,
    column_map: Mapping[str, str] | None = None,
    poll_interval: float = 30.0,
    max_calls: int | None = None,
    max_tokens: int | None = None,
    completion_window: str = "24h",
    notify: Callable[[str], None] | None = None,
) -> EvaluationReport:
    """Deprecated: ``evaluate(dataset, metrics, out=out, engine=BatchEngine(judge))``, which
    this calls (the same results, the same files)."""
    warnings.warn(
        "evaluate_batch is deprecated and will be removed in ragrecall 0.3; use "
        "evaluate(dataset, metrics, out=..., engine=ragrecall.engines.BatchEngine(judge))",
        DeprecationWarning,
        stacklevel=2,
    )
    engine = BatchEngine(judge, poll_interval, completion_window)
    return evaluate(
        dataset,
        list(metrics),
        out=out,
        max_calls=max_calls,
        max_tokens=max_tokens,
        engine=engine,
        column_map=column_map,
        show_progress=False,
        notify=notify,
    )
