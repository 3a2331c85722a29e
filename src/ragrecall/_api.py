"""The calls that run a dataset: ``evaluate`` (blocking), ``aevaluate`` (async) and
``astream`` (each sample as it finishes) read it, open an ``Evaluation`` on an engine
(``LocalEngine`` by default; ``BatchEngine``, ``ragrecall.ray.RayEngine``) and delegate to it,
as httpx's ``_api.py`` opens a client and delegates to its transport. ``ragrecall eval``
opens the same ``Evaluation``. ``evaluate_batch``, deprecated, calls ``evaluate``.

One concern over 300 lines: the public calls that run a dataset, most of it their documented
parameters.
"""

from __future__ import annotations

import asyncio
import itertools
import time
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._analysis.answers import LabelSource
from ._analysis.corrected import CorrectedMean
from ._analysis.correction import Correction
from ._core.schemas import Sample
from ._io.samples import iter_samples, load_samples
from ._judge.resolve import JudgeLike
from ._metrics.context_recall import ContextRecall
from ._report.evaluation import EvaluationReport, evaluation_report
from ._running.budget import Budget
from ._running.engines.base import Engine, Outcome, RunSettings
from ._running.engines.local import LocalEngine
from ._running.engines.stream import ScoredSample
from ._running.run import Run
from ._running.spec import MetricLike
from ._running.store import Record

if TYPE_CHECKING:  # the batch engine loads the OpenAI client: imported when asked for
    from ._running.engines.batch.engine import MetricFactory

__all__ = ["Evaluation", "aevaluate", "astream", "evaluate", "evaluate_batch"]


class Evaluation(Run):
    """A run as ``evaluate``, its twins and ``ragrecall eval`` open it: ``Run`` with the
    budget of ``max_calls`` / ``max_tokens`` and, with ``labels``, their ``Correction``
    listening (read and checked before any judge call; ``metrics``' ``names`` when known)."""

    def __init__(
        self,
        samples: Sequence[Sample],
        metrics: Sequence[MetricLike] | None = None,
        *,
        engine: Engine | None = None,
        out: str | Path | None = None,
        max_calls: int | None = None,
        max_tokens: int | None = None,
        settings: RunSettings | None = None,
        labels: LabelSource | Sequence[LabelSource] | None = None,
        names: Sequence[str] | None = None,
    ):
        self.start = time.perf_counter()
        budget = Budget(max_calls, max_tokens)
        super().__init__(samples, metrics, engine=engine, out=out, budget=budget, settings=settings)
        self.correction: Correction | None = None
        if labels is not None:
            self.correction = Correction(labels, self.ids, names)
            self.listen(self.correction.add)

    def corrected(self, outcome: Outcome) -> dict[str, CorrectedMean]:
        """Each labelled metric's mean corrected by the labels (none without labels)."""
        return {} if self.correction is None else self.correction.means(outcome.metrics)

    def report(self, outcome: Outcome) -> EvaluationReport:
        """The report of a run whose records were kept (``keep``)."""
        elapsed = time.perf_counter() - self.start
        return evaluation_report(self, outcome, self.corrected(outcome), elapsed)


def evaluate(
    dataset: Any,
    metrics: Sequence[MetricLike] | None = None,
    *,
    out: str | Path | None = None,
    max_calls: int | None = None,
    max_tokens: int | None = None,
    engine: Engine | None = None,
    column_map: Mapping[str, str] | None = None,
    concurrency: int | None = None,
    max_retries: int | None = None,
    timeout: float | None = None,
    repeats: int = 1,
    show_progress: bool | None = None,
    notify: Callable[[str], None] | None = None,
    labels: LabelSource | Sequence[LabelSource] | None = None,
) -> EvaluationReport:
    """Score every sample of ``dataset`` with every metric (default: ``ContextRecall()``).

    Judge failures make a sample unscorable; they never stop the batch. ``evaluate`` blocks
    (and works inside notebooks); ``aevaluate`` is its async twin and ``astream`` its
    streaming one.

    Args:
        dataset: a list of dicts or ``Sample``s, a pandas DataFrame, a Hugging Face Dataset,
            or a path to a .jsonl/.json/.csv/.parquet file or a directory of them.
        metrics: metric objects, registered names, ``MetricSpec``s or factories taking the
            judge (which an engine that builds its own metrics needs); default
            ``[ContextRecall()]``.
        out: the engine's results store (a JSONL file, on Ray a directory): each sample is
            written as it finishes, and a run again skips the samples already there
            unchanged (they are in the report too).
        max_calls: the judge budget in calls: no sample (or batch request) starts once its
            estimated work would not fit; samples left unscored are ``not_reached`` in the
            report (``not_reached()``; not unscorable) and ``budget_spent`` is set.
        max_tokens: the judge budget in tokens, likewise.
        engine: where to score (default ``LocalEngine()``: this process; ``BatchEngine``:
            the provider's Batch API; ``ragrecall.ray.RayEngine``: a Ray cluster).
        column_map: your column names mapped to ours (``{"gold": "reference"}``).
        concurrency: samples scored at once (default: the engine's).
        max_retries: overrides every metric's own when given (the metrics are not changed).
        timeout: seconds per judge call; overrides every metric's own when given.
        repeats: judges each sample that many times: ``score`` is the mean, ``runs`` each
            run's score.
        show_progress: a progress bar (default: when stderr is a terminal).
        notify: hears what the run says (resuming, batches sent).
        labels: people's labels of whole answers (a labels file from the page of
            ``ragrecall review RESULTS --answers N``, its CSV, a list of files or of
            ``Label``s): the report's ``corrected`` then holds, per metric labelled, the
            judge's mean corrected by them (``ppi_mean``, a 90 % interval), the judge's
            measured bias with its interval, and the labels that matched no sample.

    Returns:
        The run's ``EvaluationReport``: every sample's results, each metric's mean, the
            unscorable samples, usage, and the corrected means when ``labels`` are given.

    Raises:
        SampleError: a row that cannot be read as a sample (file and line named), or labels
            that cannot correct this dataset (none of its samples, an incomplete answer,
            other claims); raised before any judge call.
    """
    settings = RunSettings(
        repeats, timeout, max_retries, show_progress, notify or _quiet, concurrency
    )
    run = _kept(dataset, metrics, out, max_calls, max_tokens, engine, column_map, settings, labels)
    return run.report(run.score())


async def aevaluate(
    dataset: Any,
    metrics: Sequence[MetricLike] | None = None,
    *,
    out: str | Path | None = None,
    max_calls: int | None = None,
    max_tokens: int | None = None,
    engine: Engine | None = None,
    column_map: Mapping[str, str] | None = None,
    concurrency: int | None = None,
    max_retries: int | None = None,
    timeout: float | None = None,
    repeats: int = 1,
    show_progress: bool | None = None,
    notify: Callable[[str], None] | None = None,
    labels: LabelSource | Sequence[LabelSource] | None = None,
) -> EvaluationReport:
    """The async twin of ``evaluate`` (the engine's ``ascore``): the same arguments, the
    same report.

    Args:
        dataset: rows, a DataFrame, a Hugging Face Dataset or a path (as ``evaluate``).
        metrics: metric objects, names, ``MetricSpec``s or factories (default
            ``[ContextRecall()]``).
        out: the results store; a run again resumes from it.
        max_calls: the judge budget in calls.
        max_tokens: the judge budget in tokens.
        engine: where to score (default ``LocalEngine()``).
        column_map: your column names mapped to ours.
        concurrency: samples scored at once (default: the engine's).
        max_retries: overrides every metric's own when given.
        timeout: seconds per judge call; overrides every metric's own when given.
        repeats: judges each sample that many times.
        show_progress: a progress bar (default: when stderr is a terminal).
        notify: hears what the run says.
        labels: people's labels of whole answers, for the corrected means.

    Returns:
        The run's ``EvaluationReport``.

    Raises:
        SampleError: a row that cannot be read, or labels that cannot correct this dataset.
    """
    settings = RunSettings(
        repeats, timeout, max_retries, show_progress, notify or _quiet, concurrency
    )
    run = _kept(dataset, metrics, out, max_calls, max_tokens, engine, column_map, settings, labels)
    return run.report(await run.ascore())


async def astream(
    dataset: Any,
    metrics: Sequence[MetricLike] | None = None,
    *,
    out: str | Path | None = None,
    max_calls: int | None = None,
    max_tokens: int | None = None,
    engine: Engine | None = None,
    column_map: Mapping[str, str] | None = None,
    concurrency: int | None = None,
    max_retries: int | None = None,
    timeout: float | None = None,
    repeats: int = 1,
    skip: Callable[[Sample], bool | Awaitable[bool]] | None = None,
) -> AsyncIterator[ScoredSample]:
    """Score samples and yield each as soon as all its metrics finish (completion order),
    on any engine.

    Every row is checked before the first judge call; the engine's records are yielded as it
    hands them over (on ``out``, the resumed ones first). With none of ``out``, a budget or
    an engine other than ``LocalEngine``, rows are then read again lazily and handed to the
    engine ``SLICE`` at a time (memory stays bounded); otherwise the dataset is read once and
    handed over whole.

    Args:
        dataset: rows, a DataFrame, a Hugging Face Dataset or a path (as ``evaluate``).
        metrics: metric objects, names, ``MetricSpec``s or factories (default
            ``[ContextRecall()]``).
        out: the results store; the samples already there are yielded first.
        max_calls: the judge budget in calls.
        max_tokens: the judge budget in tokens.
        engine: where to score (default ``LocalEngine()``).
        column_map: your column names mapped to ours.
        concurrency: samples scored at once (default: the engine's).
        max_retries: overrides every metric's own when given.
        timeout: seconds per judge call; overrides every metric's own when given.
        repeats: judges each sample that many times.
        skip: the local engine's: leaves out the samples it returns (or resolves to) True
            for, asked as each is about to start.

    Yields:
        Each sample's ``ScoredSample`` (its row and its record), as it finishes.

    Raises:
        ValueError: ``skip`` with an engine other than ``LocalEngine``.
        SampleError: a row that cannot be read as a sample.
    """
    if skip is not None and engine is not None and not isinstance(engine, LocalEngine):
        raise ValueError(f"skip is asked by the local engine, not the {engine.name} engine")
    settings = RunSettings(repeats, timeout, max_retries, False, _quiet, concurrency, skip)
    local = engine is None or isinstance(engine, LocalEngine)
    lazy = local and out is None and max_calls is None and max_tokens is None
    chosen = list(metrics) if metrics else [ContextRecall()]  # one set for every slice
    offset = 0
    for samples in _slices(dataset, column_map, SLICE if lazy else None):
        run = Evaluation(samples, chosen, engine=engine, out=out, max_calls=max_calls,
                         max_tokens=max_tokens, settings=settings)  # fmt: skip
        async for item in _streamed(run, offset):
            yield item
        offset += len(samples)


SLICE = 1000  # samples a lazy astream hands its engine at once


def _slices(
    dataset: Any, column_map: Mapping[str, str] | None, size: int | None
) -> Iterator[list[Sample]]:
    """The samples of ``dataset``: every row checked, then ``size`` at a time read lazily
    (at least one slice, maybe empty), or all at once when ``size`` is None."""
    if size is None:
        yield load_samples(dataset, column_map)
        return
    if isinstance(dataset, Iterator):  # a one-shot iterator is read once, here
        dataset = list(dataset)
    for _ in iter_samples(dataset, column_map):
        pass
    rows = iter_samples(dataset, column_map)
    samples = list(itertools.islice(rows, size))
    yield samples
    while len(samples) == size and (samples := list(itertools.islice(rows, size))):
        yield samples


async def _streamed(run: Evaluation, offset: int) -> AsyncIterator[ScoredSample]:
    """``run``'s records as they come, each at its row (``offset`` + its place in the run)."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[ScoredSample | None] = asyncio.Queue()

    def hand(record: Record) -> None:
        index = run.index(record)
        where = record.index if index is None else offset + index
        loop.call_soon_threadsafe(
            queue.put_nowait, ScoredSample(where, record.sample, record.results)
        )

    run.listen(hand)
    task = asyncio.ensure_future(run.ascore())
    task.add_done_callback(lambda _: loop.call_soon_threadsafe(queue.put_nowait, None))
    try:
        while (handed := await queue.get()) is not None:
            yield handed
        await task  # its error, if any
    finally:
        task.cancel()


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
    from ._running.engines.batch.engine import BatchEngine

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


def _kept(
    dataset: Any,
    metrics: Sequence[MetricLike] | None,
    out: str | Path | None,
    max_calls: int | None,
    max_tokens: int | None,
    engine: Engine | None,
    column_map: Mapping[str, str] | None,
    settings: RunSettings,
    labels: LabelSource | Sequence[LabelSource] | None,
) -> Evaluation:
    """``evaluate``'s run of ``dataset``, keeping every record for the report."""
    samples = load_samples(dataset, column_map)
    run = Evaluation(
        samples,
        metrics,
        engine=engine,
        out=out,
        max_calls=max_calls,
        max_tokens=max_tokens,
        settings=settings,
        labels=labels,
    )
    run.listen(run.keep)
    return run


def _quiet(_: str) -> None:
    pass
