"""Samples scored concurrently, each yielded as soon as all its metrics finish: the core of
the local engine (and of each Ray worker)."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Iterator,
    Mapping,
    Sequence,
)
from dataclasses import dataclass, replace
from typing import Any

from ragrecall._core.schemas import RecallResult, Sample
from ragrecall._io.samples import iter_samples
from ragrecall._metrics.base import Metric
from ragrecall._metrics.repeats import combine_runs

__all__ = ["ScoredSample", "resolved", "scored"]


@dataclass(frozen=True)
class ScoredSample:
    """One sample's results, as ``astream`` yields them (``index``: its row in the input)."""

    index: int
    sample: Sample
    results: dict[str, RecallResult]


async def scored(
    dataset: Any,
    metrics: Sequence[Metric[RecallResult]],
    *,
    column_map: Mapping[str, str] | None = None,
    concurrency: int | None = None,
    max_retries: int | None = None,
    timeout: float | None = None,
    repeats: int = 1,
    skip: Callable[[Sample], bool | Awaitable[bool]] | None = None,
) -> AsyncIterator[ScoredSample]:
    """Score samples and yield each as soon as all its metrics finish (completion order).

    Every row is validated before the first judge call (a bad row raises SampleError naming it);
    then rows are read again lazily, so memory stays bounded by ``concurrency`` (default: the
    judge's slots, or 8). ``skip`` leaves out the samples it returns (or, a coroutine
    function, resolves to) True for, asked as each sample is about to start (the budget).
    ``max_retries`` and ``timeout`` override the metrics' own when given (the metrics are not
    changed); ``repeats`` judges each sample that many times.
    """
    names = [m.name for m in metrics]
    if not metrics or len(set(names)) != len(names):
        raise ValueError(f"need one or more metrics with unique names, got {names}")
    if isinstance(dataset, Iterator):  # a one-shot iterator is read once, here
        dataset = list(dataset)
    for _ in iter_samples(dataset, column_map):
        pass
    if concurrency is None:
        judged = [m for m in metrics if m.uses_judge]
        concurrency = (getattr(judged[0].judge, "slots", None) if judged else None) or 8
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    overrides: dict[str, Any] = {"max_retries": max_retries, "timeout": timeout}
    overrides = {k: v for k, v in overrides.items() if v is not None}
    policies = {m.name: replace(m.policy, **overrides) for m in metrics}

    async def score(index: int, sample: Sample) -> ScoredSample:
        results = {
            m.name: combine_runs([await m.ascore(sample, policies[m.name]) for _ in range(repeats)])
            for m in metrics
        }
        return ScoredSample(index, sample, results)

    rows = enumerate(iter_samples(dataset, column_map))
    pending: set[asyncio.Task[ScoredSample]] = set()
    try:
        while True:
            for index, sample in rows:
                if skip is None or not await resolved(skip(sample)):
                    pending.add(asyncio.ensure_future(score(index, sample)))
                if len(pending) >= concurrency:
                    break
            if not pending:
                return
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            errors = [e for e in (t.exception() for t in done) if e is not None]
            if errors:  # a judge that cannot start (scoring failures are results, not errors)
                raise errors[0]
            for task in sorted(done, key=lambda t: t.result().index):
                yield task.result()
    finally:
        for task in pending:
            task.cancel()


async def resolved(value: bool | Awaitable[bool]) -> bool:
    """``value``, awaited when it is awaitable."""
    return await value if inspect.isawaitable(value) else value
