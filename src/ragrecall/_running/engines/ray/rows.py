"""Rows as they move through Ray: samples in, results out (one row per sample and metric).

A result row carries what a line of ``eval --out`` carries, flattened: the sample's ``key``,
``occurrence``, ``content`` digest and input ``index``; the ``metric``, its ``score``,
``status``, ``reason``, ``claims``, ``claim_set`` hash, ``verdicts`` (JSON), ``usage`` and
``judge`` (JSON); the ``sample`` (JSON) and the whole ``result`` (JSON, read back as the
metric's own result type). Complex fields are JSON so every part has one schema.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import pyarrow as pa

from ragrecall._core.schemas import RecallResult, Sample
from ragrecall._metrics.registry import result_type
from ragrecall._running.store import Record

__all__ = ["RESULT_SCHEMA", "SAMPLE_SCHEMA", "records", "result_rows", "sample_row"]

_USAGE = pa.struct(
    [
        ("calls", pa.int64()),
        ("retries", pa.int64()),
        ("prompt_tokens", pa.int64()),
        ("cached_tokens", pa.int64()),
        ("completion_tokens", pa.int64()),
    ]
)

# A sample on its way to the workers (``task``: what its claims are decomposed from).
SAMPLE_SCHEMA = pa.schema(
    [
        ("key", pa.string()),
        ("occurrence", pa.int64()),
        ("content", pa.string()),
        ("index", pa.int64()),
        ("sample", pa.string()),
    ]
)

RESULT_SCHEMA = pa.schema(
    [
        ("key", pa.string()),
        ("occurrence", pa.int64()),
        ("content", pa.string()),
        ("index", pa.int64()),
        ("metric", pa.string()),
        ("score", pa.float64()),
        ("status", pa.string()),
        ("reason", pa.string()),
        ("claims", pa.list_(pa.string())),
        ("claim_set", pa.string()),
        ("verdicts", pa.string()),
        ("usage", _USAGE),
        ("judge", pa.string()),
        ("sample", pa.string()),
        ("result", pa.string()),
    ]
)


def sample_row(
    sample: Sample, key: str, occurrence: int, content: str, index: int
) -> dict[str, Any]:
    return {
        "key": key,
        "occurrence": occurrence,
        "content": content,
        "index": index,
        "sample": sample.model_dump_json(exclude_none=True),
    }


def result_rows(record: Record) -> Iterator[dict[str, Any]]:
    """A finished sample's rows, one per metric."""
    sample = record.sample.model_dump_json(exclude_none=True)
    for name, result in record.results.items():
        yield {
            "key": record.key,
            "occurrence": record.occurrence,
            "content": record.content,
            "index": record.index,
            "metric": name,
            "score": result.score,
            "status": result.status,
            "reason": result.reason,
            "claims": list(result.claims),
            "claim_set": result.claim_set,
            "verdicts": json.dumps([v.model_dump(mode="json") for v in result.verdicts]),
            "usage": result.usage.model_dump(),
            "judge": None if result.judge is None else result.judge.model_dump_json(),
            "sample": sample,
            "result": result.model_dump_json(),
        }


def records(rows: Iterable[Mapping[str, Any]], metrics: int) -> Iterator[Record]:
    """Records from result rows, each once all its ``metrics`` rows are in (a sample's rows
    are written together, so few wait at a time)."""
    waiting: dict[tuple[str, int], dict[str, RecallResult]] = {}
    for row in rows:
        sample_id = (str(row["key"]), int(row["occurrence"]))
        results = waiting.setdefault(sample_id, {})
        name = str(row["metric"])
        results[name] = result_type(name).model_validate_json(row["result"])
        if len(results) == metrics:
            del waiting[sample_id]
            yield Record(
                key=sample_id[0],
                index=int(row["index"]),
                sample=Sample.model_validate_json(row["sample"]),
                results=results,
                occurrence=sample_id[1],
                content=str(row["content"]),
            )
