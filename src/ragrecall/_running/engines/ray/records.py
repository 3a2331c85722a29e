"""A run's summary and HTML report from its results dataset, streamed batch by batch: the
driver holds the summary (bounded), never the results."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pyarrow as pa
import ray.data

from ragrecall._analysis.summary import RunSummary
from ragrecall._report.html import eval_report
from ragrecall._running.store import Record

from .rows import records

__all__ = ["iter_records", "report", "summarize"]


def iter_records(results: ray.data.Dataset, metrics: Sequence[str]) -> Iterator[Record]:
    """The results dataset as records (one per sample, all its metrics), streamed."""
    batches = results.iter_batches(batch_format="pyarrow")
    rows = (row for batch in batches for row in pa.table(batch).to_pylist())
    return records(rows, len(metrics))


def summarize(results: ray.data.Dataset, metrics: Sequence[str], worst: int = 5) -> RunSummary:
    """The ``eval`` summary (means, CIs, unscorable shares, worst samples) of ``results``."""
    summary = RunSummary(metrics, worst)
    for record in iter_records(results, metrics):
        summary.add(record)
    return summary


def report(results: ray.data.Dataset, metrics: Sequence[str], title: str = "") -> str:
    """The ``eval`` HTML report of ``results`` (it lists every sample, so it holds them)."""
    return eval_report(list(iter_records(results, metrics)), metrics, title=title)
