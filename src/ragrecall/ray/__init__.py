"""ragrecall on a Ray cluster (``pip install 'ragrecall[ray]'``): score datasets past one
machine, at one cluster-wide rate limit, with nothing lost and nothing scored twice.

    import ragrecall.ray as rr

    spec = rr.MetricSpec("context_recall", "openai:gpt-4o-mini")
    results = rr.evaluate("s3://bucket/logs/", [spec], out="results/", workers=8,
                          concurrency_per_worker=16, rpm=3000)
    print(rr.summarize(results, ["context_recall"]).metrics[0].mean)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .._extras import requires

with requires("ragrecall.ray"):
    import ray.data

    from ._gate import Limits
    from ._run import RayRun, start
    from ._spec import JudgeSpec, MetricSpec, factory, server
    from ._summary import iter_records, report, summarize

__all__ = [
    "JudgeSpec",
    "Limits",
    "MetricSpec",
    "RayRun",
    "evaluate",
    "factory",
    "iter_records",
    "report",
    "run",
    "server",
    "summarize",
]


def run(
    data: Any,
    metrics: Sequence[MetricSpec | str] = ("context_recall",),
    *,
    out: str | Path | None = None,
    workers: int = 2,
    concurrency_per_worker: int = 8,
    num_cpus: float = 1.0,
    num_gpus: float = 0.0,
    rpm: float | None = None,
    tpm: float | None = None,
    max_calls: int | None = None,
    max_tokens: int | None = None,
    repeats: int = 1,
    timeout: float | None = None,
    column_map: Mapping[str, str] | None = None,
    batch_size: int | None = None,
    decompose_once: bool = True,
) -> RayRun:
    """Like ``evaluate``, with what the run left besides its results: how many samples
    ``out`` already held, and the cluster gate's state (budget spent, calls, pauses)."""
    return start(
        data,
        metrics,
        out=out,
        workers=workers,
        concurrency_per_worker=concurrency_per_worker,
        num_cpus=num_cpus,
        num_gpus=num_gpus,
        limits=Limits(rpm, tpm, max_calls, max_tokens),
        repeats=repeats,
        timeout=timeout,
        column_map=column_map,
        batch_size=batch_size,
        decompose_once=decompose_once,
    )


def evaluate(
    data: Any,
    metrics: Sequence[MetricSpec | str] = ("context_recall",),
    *,
    out: str | Path | None = None,
    workers: int = 2,
    concurrency_per_worker: int = 8,
    num_cpus: float = 1.0,
    num_gpus: float = 0.0,
    rpm: float | None = None,
    tpm: float | None = None,
    max_calls: int | None = None,
    max_tokens: int | None = None,
    repeats: int = 1,
    timeout: float | None = None,
    column_map: Mapping[str, str] | None = None,
    batch_size: int | None = None,
    decompose_once: bool = True,
) -> ray.data.Dataset:
    """Score ``data`` on Ray: one result row per sample and metric (the fields of an
    ``eval --out`` line; see ``ragrecall.ray._rows``).

    ``data``: a ``ray.data.Dataset``, a URI Ray reads (``s3://.../`` Parquet or JSONL), or
    anything ``ragrecall.evaluate`` takes (read once on the driver). ``metrics``: specs (or
    registered names), built once per worker. ``workers`` actors score
    ``concurrency_per_worker`` samples at once each, with ``num_cpus``/``num_gpus`` apiece.
    ``rpm``/``tpm`` and ``max_calls``/``max_tokens`` hold for the whole cluster; a
    ``Retry-After`` pauses every worker. Distinct references are decomposed once for the run
    (``decompose_once``). With ``out`` (a directory), results are written there as Parquet
    parts as they finish, a run again skips the samples already there, and the dataset
    returned reads them all back; without, it is lazy (scored when consumed).
    """
    return run(
        data,
        metrics,
        out=out,
        workers=workers,
        concurrency_per_worker=concurrency_per_worker,
        num_cpus=num_cpus,
        num_gpus=num_gpus,
        rpm=rpm,
        tpm=tpm,
        max_calls=max_calls,
        max_tokens=max_tokens,
        repeats=repeats,
        timeout=timeout,
        column_map=column_map,
        batch_size=batch_size,
        decompose_once=decompose_once,
    ).results
