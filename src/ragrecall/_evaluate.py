"""Score a dataset with one or more metrics, concurrently, and report the results."""

from __future__ import annotations

import asyncio
import functools
import inspect
import threading
import time
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Coroutine,
    Iterator,
    Mapping,
    Sequence,
)
from dataclasses import dataclass, replace
from typing import Any, ParamSpec, TypeVar

from pydantic import BaseModel, Field

from ._data import iter_samples, load_samples
from ._extras import requires
from ._metrics.base import Metric
from ._metrics.context_recall import ContextRecall
from ._metrics.repeats import combine_runs
from ._progress import progress
from ._schemas import RecallResult, Sample, Usage

__all__ = ["EvaluationReport", "ScoredSample", "aevaluate", "astream", "blocking", "evaluate"]

T = TypeVar("T")
P = ParamSpec("P")


class EvaluationReport(BaseModel):
    """Per-sample results for each metric, their means and the judge usage."""

    samples: list[Sample]
    results: dict[str, list[RecallResult]] = Field(description="Metric name -> one per sample.")
    usage: Usage = Field(default_factory=Usage)
    elapsed_s: float = 0.0

    @property
    def scores(self) -> dict[str, float | None]:
        """Mean score of each metric over its scored samples (None if none scored)."""
        means: dict[str, float | None] = {}
        for name, results in self.results.items():
            scored = [r.score for r in results if r.score is not None]
            means[name] = sum(scored) / len(scored) if scored else None
        return means

    @property
    def mean(self) -> float | None:
        """Mean score of the first metric."""
        return next(iter(self.scores.values()), None)

    def unscorable(self, metric: str | None = None) -> list[int]:
        """Indices of the samples a metric could not score."""
        name = metric or next(iter(self.results))
        return [i for i, r in enumerate(self.results[name]) if r.status == "unscorable"]

    def to_pandas(self) -> Any:
        """One row per sample, as RAGAS gives it: the sample's own columns (``user_input``,
        ``retrieved_contexts`` as texts, ``reference``, ``response``, ids, ...; those no sample
        has are left out), then per metric its score, and ``<metric>_status``, ``_reason`` and
        ``_missing``."""
        with requires("to_pandas"):
            import pandas as pd

        given = {name for s in self.samples for name in s.model_fields_set}
        columns = [name for name in Sample.model_fields if name in given]
        rows = []
        for i, sample in enumerate(self.samples):
            row: dict[str, Any] = {name: getattr(sample, name) for name in columns}
            if "retrieved_contexts" in row:
                row["retrieved_contexts"] = [c.text for c in sample.retrieved_contexts]
            for name, results in self.results.items():
                result = results[i]
                row[name] = result.score
                row[f"{name}_status"] = result.status
                row[f"{name}_reason"] = result.reason
                row[f"{name}_missing"] = result.missing
            rows.append(row)
        return pd.DataFrame(rows)


async def aevaluate(
    dataset: Any,
    metrics: Sequence[Metric[RecallResult]] | None = None,
    *,
    column_map: Mapping[str, str] | None = None,
    concurrency: int | None = None,
    max_retries: int | None = None,
    timeout: float | None = None,
    repeats: int = 1,
    show_progress: bool | None = None,
) -> EvaluationReport:
    """Score every sample of ``dataset`` with every metric (default: ContextRecall()).

    ``dataset``: a list of dicts or Samples, a pandas DataFrame, a Hugging Face Dataset, or a
    path to a .jsonl/.json/.csv/.parquet file or a directory of them. Judge failures make a
    sample unscorable; they never stop the batch. ``concurrency`` defaults to the judge's
    slots (local) or 8.
    ``max_retries`` and ``timeout`` override every metric's own when given. ``repeats``
    judges each sample that many times: ``score`` is the mean, ``runs`` each run's score.
    ``evaluate`` blocks (and works inside notebooks); ``aevaluate`` is its async twin.
    """
    start = time.perf_counter()
    samples = load_samples(dataset, column_map)
    metrics = list(metrics) if metrics else [ContextRecall()]
    results: dict[str, list[RecallResult | None]] = {m.name: [None] * len(samples) for m in metrics}
    stream = astream(
        samples,
        metrics,
        concurrency=concurrency,
        max_retries=max_retries,
        timeout=timeout,
        repeats=repeats,
    )
    with progress(len(samples), show_progress) as advance:
        async for scored in stream:
            for name, result in scored.results.items():
                results[name][scored.index] = result
            advance()
    final = {name: [r for r in rs if r is not None] for name, rs in results.items()}
    usage = sum((r.usage for rs in final.values() for r in rs), Usage())
    return EvaluationReport(
        samples=samples, results=final, usage=usage, elapsed_s=time.perf_counter() - start
    )


def blocking(coroutine: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, T]:
    """The blocking twin of the coroutine function ``coroutine``, run on ragrecall's one
    long-lived loop (so it works inside notebooks, and async clients stay bound to a live
    loop across calls)."""

    @functools.wraps(coroutine)
    def run(*args: P.args, **kwargs: P.kwargs) -> T:
        return _run_blocking(coroutine(*args, **kwargs))

    return run


evaluate = blocking(aevaluate)
evaluate.__name__ = evaluate.__qualname__ = "evaluate"


@dataclass(frozen=True)
class ScoredSample:
    """One sample's results, as ``astream`` yields them."""

    index: int
    sample: Sample
    results: dict[str, RecallResult]


async def astream(
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
    then rows are read again lazily, so memory stays bounded by ``concurrency``. ``skip`` leaves
    out the samples it returns (or, a coroutine function, resolves to) True for, asked as each
    sample is about to start (``ragrecall eval``: once its budget is spent).
    ``max_retries`` and ``timeout`` override the metrics' own when given; ``repeats`` as in
    ``evaluate``.
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
                if skip is None or not await _resolved(skip(sample)):
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


async def _resolved(value: bool | Awaitable[bool]) -> bool:
    return await value if inspect.isawaitable(value) else value


_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()


def _run_blocking(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on one long-lived background loop, so async clients cached by model
    libraries stay bound to a live loop across calls, and so this works inside notebooks."""
    global _loop
    with _loop_lock:
        if _loop is None:
            _loop = asyncio.new_event_loop()
            threading.Thread(target=_loop.run_forever, name="ragrecall-loop", daemon=True).start()
    return asyncio.run_coroutine_threadsafe(coro, _loop).result()
