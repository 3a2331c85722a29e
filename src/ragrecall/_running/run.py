"""Score a dataset with one or more metrics on any engine, and report the results.

``evaluate`` (blocking), ``aevaluate`` (async) and ``astream`` (each sample as it finishes)
are the one way to run a dataset: they read it, hand it to an engine (``LocalEngine`` by
default; ``BatchEngine``, ``ragrecall.ray.RayEngine``) with the budget and the results store
``out``, and collect what it returns (as httpx's top-level functions open a client and
delegate to its transport).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from .._analysis.answers import LabelSource, read_answer_labels
from .._analysis.corrected import AnswerLabel, CorrectedMean, check_answers, corrected_mean
from .._analysis.labels import Label
from .._core.extras import requires
from .._core.schemas import RecallResult, Sample, Usage
from .._io.samples import load_samples
from .._metrics.context_recall import ContextRecall
from .._metrics.registry import result_type
from .budget import Budget
from .engines.base import Engine, Outcome, RunSettings, identities
from .engines.local import LocalEngine
from .engines.stream import ScoredSample, scored
from .spec import MetricLike, build_metrics
from .store import Record

__all__ = ["EvaluationReport", "ScoredSample", "aevaluate", "astream", "evaluate"]

NOT_SCORED = "not scored: the budget was spent before it"


class EvaluationReport(BaseModel):
    """Per-sample results for each metric, their means and the judge usage."""

    samples: list[Sample]
    results: dict[str, list[RecallResult]] = Field(description="Metric name -> one per sample.")
    usage: Usage = Field(default_factory=Usage, description="What this run's judge spent.")
    elapsed_s: float = 0.0
    resumed: int = Field(0, description="Samples read back from ``out``, not scored again.")
    budget_spent: bool = Field(
        False, description="The budget stopped the run: samples not scored are unscorable."
    )
    corrected: dict[str, CorrectedMean] = Field(
        default_factory=dict,
        description="With ``labels=``: metric name -> its mean corrected by people's labels of "
        "whole answers (prediction-powered inference), the judge's mean and measured bias.",
    )

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
    """The async twin of ``evaluate`` (the engine's ``ascore``)."""
    run = _Run(dataset, metrics, out, max_calls, max_tokens, engine, column_map, concurrency)
    run.read_labels(labels)
    settings = RunSettings(repeats, timeout, max_retries, show_progress, notify or _quiet)
    outcome = await run.engine.ascore(run.samples, run.metrics, **run.arguments(settings))
    return run.report(outcome)


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
    """Score every sample of ``dataset`` with every metric (default: ContextRecall()).

    ``dataset``: a list of dicts or Samples, a pandas DataFrame, a Hugging Face Dataset, or a
    path to a .jsonl/.json/.csv/.parquet file or a directory of them. ``metrics``: metric
    objects, registered names, ``MetricSpec``s or factories taking the judge (which an engine
    that builds its own metrics needs). Judge failures make a sample unscorable; they never
    stop the batch.

    ``engine``: where to score (default ``LocalEngine()``: this process; ``BatchEngine``: the
    provider's Batch API; ``ragrecall.ray.RayEngine``: a Ray cluster). ``out``: the engine's
    results store (a JSONL file, on Ray a directory): each sample is written as it finishes,
    and a run again skips the samples already there unchanged (they are in the report too).
    ``max_calls`` / ``max_tokens``: no sample (or batch request) starts once its estimated
    work would not fit; samples left unscored are unscorable in the report ("not scored ...")
    and ``budget_spent`` is set. ``concurrency``: samples scored at once (the engine's).
    ``max_retries`` and ``timeout`` override every metric's own when given (the metrics are
    not changed). ``repeats`` judges each sample that many times: ``score`` is the mean,
    ``runs`` each run's score. ``notify`` hears what the run says (resuming, batches sent).
    ``evaluate`` blocks (and works inside notebooks); ``aevaluate`` is its async twin and
    ``astream`` its streaming one.

    ``labels``: people's labels of whole answers (a labels file from the page of ``ragrecall
    review RESULTS --answers N``, its CSV, a list of files or of ``Label``s): the report's
    ``corrected`` then holds, per metric labelled, the judge's mean corrected by them
    (``ppi_mean``, a 90 % interval), the judge's measured bias with its interval, and the
    labels that matched no sample. Labels that cannot correct this dataset (none of its
    samples, an incomplete answer, other claims) raise SampleError naming file and line.
    """
    run = _Run(dataset, metrics, out, max_calls, max_tokens, engine, column_map, concurrency)
    run.read_labels(labels)
    settings = RunSettings(repeats, timeout, max_retries, show_progress, notify or _quiet)
    outcome = run.engine.score(run.samples, run.metrics, **run.arguments(settings))
    return run.report(outcome)


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
    """Score samples and yield each as soon as all its metrics finish (completion order), on
    any engine; the arguments are ``evaluate``'s.

    With none of ``out``, a budget or an engine, rows are validated first and then read
    lazily (memory bounded by ``concurrency``), and ``skip`` leaves out the samples it
    returns (or resolves to) True for, asked as each is about to start. Otherwise the dataset
    is read once and the engine's records are yielded as it hands them over (on ``out``, the
    resumed ones first).
    """
    plain = engine is None and out is None and max_calls is None and max_tokens is None
    if plain:
        stream = scored(
            dataset,
            build_metrics(metrics or [ContextRecall()]),
            column_map=column_map,
            concurrency=concurrency,
            max_retries=max_retries,
            timeout=timeout,
            repeats=repeats,
            skip=skip,
        )
        async for item in stream:
            yield item
        return
    if skip is not None:
        raise ValueError("skip is for the plain local stream; give a budget instead")
    run = _Run(dataset, metrics, out, max_calls, max_tokens, engine, column_map, concurrency)
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[ScoredSample | None] = asyncio.Queue()

    def hand(record: Record) -> None:
        index = run.where.get((record.id, record.content), record.index)
        item = ScoredSample(index, record.sample, record.results)
        loop.call_soon_threadsafe(queue.put_nowait, item)

    arguments = run.arguments(RunSettings(repeats, timeout, max_retries, False))
    arguments["on_record"] = hand
    task = asyncio.ensure_future(run.engine.ascore(run.samples, run.metrics, **arguments))
    task.add_done_callback(lambda _: loop.call_soon_threadsafe(queue.put_nowait, None))
    try:
        while (handed := await queue.get()) is not None:
            yield handed
        await task  # its error, if any
    finally:
        task.cancel()


class _Run:
    """What ``evaluate`` and its twins hand an engine (the samples read once, the metrics,
    the budget, the engine with ``concurrency`` given to it), and the report of what came
    back (each record put at its sample's place by identity)."""

    def __init__(
        self,
        dataset: Any,
        metrics: Sequence[MetricLike] | None,
        out: str | Path | None,
        max_calls: int | None,
        max_tokens: int | None,
        engine: Engine | None,
        column_map: Mapping[str, str] | None,
        concurrency: int | None,
    ):
        self.start = time.perf_counter()
        self.samples = load_samples(dataset, column_map)
        self.metrics = list(metrics) if metrics else [ContextRecall()]
        self.out = None if out is None else Path(out)
        self.budget = Budget(max_calls, max_tokens)
        self.where = {ident: i for i, ident in enumerate(identities(self.samples))}
        self.found: dict[int, Record] = {}
        if engine is None:
            engine = LocalEngine(concurrency)
        elif concurrency is not None:
            if "concurrency" not in engine.options:
                raise ValueError(f"the {engine.name} engine takes no concurrency")
            engine = dataclasses.replace(engine, concurrency=concurrency)  # type: ignore[type-var]
        self.engine: Engine = engine
        self.answers: list[AnswerLabel] = []
        self.other_labels = 0

    def read_labels(self, labels: LabelSource | Sequence[LabelSource] | None) -> None:
        """Read and check ``labels`` before scoring (a bad file costs no judge call)."""
        if labels is None:
            return
        sources = [labels] if isinstance(labels, (str, Path, Label)) else list(labels)
        self.answers, self.other_labels = read_answer_labels(sources)
        check_answers(self.answers, self.where, None, self.other_labels)

    def arguments(self, settings: RunSettings) -> dict[str, Any]:
        if settings.repeats < 1:
            raise ValueError("repeats must be at least 1")
        return {
            "out": self.out,
            "budget": self.budget,
            "on_record": self.keep,
            "settings": settings,
        }

    def keep(self, record: Record) -> None:
        index = self.where.get((record.id, record.content))
        if index is not None:
            self.found[index] = record

    def report(self, outcome: Outcome) -> EvaluationReport:
        results: dict[str, list[RecallResult]] = {name: [] for name in outcome.metrics}
        for index in range(len(self.samples)):
            record = self.found.get(index)
            for name, column in results.items():
                result = record.results.get(name) if record is not None else None
                column.append(result or _not_scored(name))
        records = list(self.found.values())
        labelled = [n for n in outcome.metrics if any(x.metric == n for x in self.answers)]
        if self.answers and not labelled:
            check_answers(self.answers, self.where, outcome.metrics)
        corrected = {
            name: corrected_mean(records, self.answers, name, other_labels=self.other_labels)
            for name in labelled
        }
        for name, c in corrected.items():  # from 20 labelled answers: conformal intervals
            results[name] = [c.answer_interval(r) for r in results[name]]
        return EvaluationReport(
            samples=self.samples,
            results=results,
            usage=outcome.usage,
            elapsed_s=time.perf_counter() - self.start,
            resumed=outcome.resumed,
            budget_spent=self.budget.spent,
            corrected=corrected,
        )


def _not_scored(name: str) -> RecallResult:
    return result_type(name)(metric=name, score=None, status="unscorable", reason=NOT_SCORED)


def _quiet(_: str) -> None:
    pass
