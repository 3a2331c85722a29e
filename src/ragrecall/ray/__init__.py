"""ragrecall on a Ray cluster (``pip install 'ragrecall[ray]'``): score datasets past one
machine, at one cluster-wide rate limit, with nothing lost and nothing scored twice.

    import ragrecall
    from ragrecall.engines import MetricSpec
    from ragrecall.ray import RayEngine

    spec = MetricSpec("context_recall", "openai:gpt-4o-mini")
    report = ragrecall.evaluate(data, [spec], out="results/", max_calls=50_000,
                                engine=RayEngine(workers=8, concurrency=128, rpm=3000))

``run`` is the Ray-native call: a ``ray.data.Dataset`` or a URI Ray reads (``s3://.../``) in,
the results as a lazy ``ray.data.Dataset`` out (``summarize``, ``report`` and
``iter_records`` stream them).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .._analysis.summary import RunSummary
from .._core.extras import requires
from .._report.eval_report import eval_report

with requires("ragrecall.ray"):
    import ray.data

    from .._running.engines.ray.engine import RayEngine
    from .._running.engines.ray.gate import Limits
    from .._running.engines.ray.records import iter_records
    from .._running.engines.ray.run import RayRun
    from .._running.spec import MetricLike

__all__ = [
    "Limits",
    "RayEngine",
    "RayRun",
    "iter_records",
    "report",
    "run",
    "summarize",
]


def run(
    data: Any,
    metrics: Sequence[MetricLike] = ("context_recall",),
    *,
    out: str | Path | None = None,
    max_calls: int | None = None,
    max_tokens: int | None = None,
    repeats: int = 1,
    timeout: float | None = None,
    column_map: Mapping[str, str] | None = None,
    concurrency_per_worker: int | None = None,
    **engine: Any,
) -> RayRun:
    """``RayEngine(**engine).start(...)``: score ``data`` on Ray and return the run: its
    results (lazy until consumed, or read back from ``out``), how many samples ``out``
    already held, and the cluster gate's state (budget spent, calls, pauses).

    ``engine``: ``RayEngine``'s settings (``workers``, ``concurrency``, ``rpm``, ...);
    ``concurrency_per_worker`` is the old way to say ``concurrency=workers * N``."""
    if concurrency_per_worker is not None:
        engine["concurrency"] = concurrency_per_worker * engine.get("workers", 2)
    return RayEngine(**engine).start(
        data,
        metrics,
        out=out,
        max_calls=max_calls,
        max_tokens=max_tokens,
        repeats=repeats,
        timeout=timeout,
        column_map=column_map,
    )


def summarize(results: ray.data.Dataset, metrics: Sequence[str], worst: int = 5) -> RunSummary:
    """The ``eval`` summary (means, CIs, unscorable shares, worst samples) of ``results``,
    streamed: the driver holds the summary (bounded), never the results."""
    summary = RunSummary(metrics, worst)
    for record in iter_records(results, metrics):
        summary.add(record)
    return summary


def report(results: ray.data.Dataset, metrics: Sequence[str], title: str = "") -> str:
    """The ``eval`` HTML report of ``results`` (it lists every sample, so it holds them)."""
    return eval_report(list(iter_records(results, metrics)), metrics, title=title)


# Names whose one public home is ragrecall.engines: they still work here, with a
# DeprecationWarning, until ragrecall 0.3.
_MOVED = ("MetricSpec", "factory", "server")


def __getattr__(name: str) -> object:
    if name in _MOVED:
        warnings.warn(
            f"ragrecall.ray.{name} is deprecated and will be removed in ragrecall 0.3; use "
            f"ragrecall.engines.{name}",
            DeprecationWarning,
            stacklevel=2,
        )
        from .. import engines

        return getattr(engines, name)
    if name == "JudgeSpec":  # one judge type now: ragrecall.judges.JudgeLike
        warnings.warn(
            "ragrecall.ray.JudgeSpec is deprecated and will be removed in ragrecall 0.3; use "
            "ragrecall.judges.JudgeLike",
            DeprecationWarning,
            stacklevel=2,
        )
        from .._judge.resolve import JudgeLike

        return JudgeLike
    raise AttributeError(f"module 'ragrecall.ray' has no attribute {name!r}")


def evaluate(
    data: Any, metrics: Sequence[MetricLike] = ("context_recall",), **kwargs: Any
) -> ray.data.Dataset:
    """Deprecated: ``run(data, metrics, ...).results`` (a Ray dataset of result rows), or
    ``ragrecall.evaluate(data, metrics, engine=RayEngine(...))`` for a report."""
    warnings.warn(
        "ragrecall.ray.evaluate is deprecated and will be removed in ragrecall 0.3; use "
        "ragrecall.ray.run(...).results, or ragrecall.evaluate(..., engine=RayEngine(...))",
        DeprecationWarning,
        stacklevel=2,
    )
    return run(data, metrics, **kwargs).results
