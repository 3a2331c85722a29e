"""``evaluate_batch``: ``evaluate`` through the judge provider's Batch API."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_openai import ChatOpenAI

from .._data import load_samples
from .._evaluate import EvaluationReport
from .._judge.resolve import JudgeLike, resolve_judge
from .._metrics.base import Metric, MetricOptions
from .._metrics.registry import metric_class
from .._results_file import Record, ResultsFile, read_records
from .._run import Budget, Identity, identities
from .._schemas import RecallResult, Sample
from .api import BatchAPI
from .exchange import Exchange, batch_judge
from .journal import Journal
from .run import BatchSettings, journal_path, run_rounds

__all__ = ["BatchJudge", "MetricFactory", "evaluate_batch"]

MetricFactory = Callable[[BaseChatModel], Metric[RecallResult]]


class BatchJudge:
    """A judge whose requests go out in batches: ``chat`` (metrics judge with it), the
    ``exchange`` that answers it, and the ``api`` of the judge's server."""

    def __init__(self, judge: BaseChatModel, completion_window: str = "24h"):
        self.exchange = Exchange()
        self.chat = batch_judge(judge, self.exchange)
        assert isinstance(judge, ChatOpenAI)  # batch_judge refused any other
        self.api = BatchAPI(judge.root_client.with_options(max_retries=5), completion_window)

    def score(
        self,
        samples: Sequence[Sample],
        metrics: Sequence[Metric[RecallResult]],
        *,
        ids: Sequence[Identity],
        store: ResultsFile,
        budget: Budget,
        on_record: Callable[[Record], None],
        poll_interval: float,
        notify: Callable[[str], None],
    ) -> None:
        """Score the samples not in ``store`` (``metrics`` judge with ``chat``), journaled
        beside it; ``notify`` hears of each batch sent and how it goes."""
        journal = Journal.open(journal_path(store.path))
        if journal.running:
            notify(f"resuming: {len(journal.running)} batches still running, from {journal.path}")
        try:
            run_rounds(
                samples,
                metrics,
                ids=ids,
                store=store,
                journal=journal,
                api=self.api,
                exchange=self.exchange,
                budget=budget,
                on_record=on_record,
                settings=BatchSettings(poll_interval=poll_interval),
                notify=notify,
            )
        finally:
            journal.close()


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
    """Score ``dataset`` as ``evaluate`` does, with every judge request sent through the
    provider's Batch API (OpenAI's, or a server that speaks it): typically half the price,
    answered within ``completion_window``. Blocks until every sample is scored, polling every
    ``poll_interval`` seconds.

    ``judge``: ``"openai:MODEL"`` or a ``ChatOpenAI`` (any OpenAI-compatible server with the
    files and batches endpoints). ``metrics``: registered names, or factories taking the judge
    (``functools.partial(ResponseRecall, claims="sentences")``); names use the batched
    attribution strategy, so a sample takes two rounds (claims, then verdicts). ``out``: the
    results file (JSONL, as ``ragrecall eval --out`` writes it); the batch ids and every answer
    are journaled beside it (``OUT.batches.jsonl``), so an interrupted run started again
    collects the batches still running and pays for no request twice. ``max_calls`` /
    ``max_tokens``: no more requests are sent once they would not fit; samples left unscored
    are unscorable in the report ("not scored ...") and are not written, so a run again goes on.
    """
    start = time.perf_counter()
    samples = load_samples(dataset, column_map)
    batch = BatchJudge(resolve_judge(judge), completion_window)
    options = MetricOptions(strategy="batched")
    built = [
        metric_class(m).from_options(batch.chat, options) if isinstance(m, str) else m(batch.chat)
        for m in metrics
    ]
    names = [m.name for m in built]
    if not built or len(set(names)) != len(names):
        raise ValueError(f"need one or more metrics with unique names, got {names}")
    out = Path(out)
    ids = identities(samples)
    budget = Budget(max_calls, max_tokens)
    store = ResultsFile.open(out, metrics=names, repeats=1)
    try:
        batch.score(
            samples,
            built,
            ids=ids,
            store=store,
            budget=budget,
            on_record=lambda _: None,
            poll_interval=poll_interval,
            notify=notify or (lambda _: None),
        )
    finally:
        store.close()
    found = {(r.id, r.content): r for r in read_records(out)}
    results: dict[str, list[RecallResult]] = {m.name: [] for m in built}
    for sample_id, content in ids:
        record = found.get((sample_id, content))
        for metric in built:
            result = record.results.get(metric.name) if record is not None else None
            results[metric.name].append(
                result or metric.unscorable("not scored: the budget was spent before it")
            )
    return EvaluationReport(
        samples=samples, results=results, usage=budget.usage, elapsed_s=time.perf_counter() - start
    )
