"""A Ray run's results dataset read back as records, streamed batch by batch (the driver
never holds the results)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pyarrow as pa
import ray.data

from ragrecall._running.store import Record

from .rows import records

__all__ = ["iter_records"]


def iter_records(results: ray.data.Dataset, metrics: Sequence[str]) -> Iterator[Record]:
    """The results dataset as records (one per sample, all its metrics), streamed."""
    batches = results.iter_batches(batch_format="pyarrow")
    rows = (row for batch in batches for row in pa.table(batch).to_pylist())
    return records(rows, len(metrics))
