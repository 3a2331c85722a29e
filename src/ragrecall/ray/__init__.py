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

from .._core.extras import requires

with requires("ragrecall.ray"):
    import ray.data

    from .._running.engines.ray.engine import RayEngine
    from .._running.engines.ray.gate import Limits
    from .._running.engines.ray.run import RayRun
    from .._running.engines.ray.summary import iter_records, report, summarize
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
