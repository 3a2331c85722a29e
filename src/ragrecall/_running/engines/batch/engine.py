"""The batch engine: every judge request sent through the provider's Batch API, in rounds
(``rounds``), journaled beside the results file so a run started again pays for nothing twice;
``evaluate_batch`` (``_deprecated``) is now ``evaluate(..., engine=BatchEngine(judge))``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import ClassVar

from langchain_core.language_models import BaseChatModel
from langchain_openai import ChatOpenAI

from ragrecall._core.schemas import RecallResult, Sample
from ragrecall._judge.resolve import JudgeLike, resolve_judge
from ragrecall._metrics.base import Metric, MetricOptions
from ragrecall._running.budget import Budget
from ragrecall._running.spec import MetricLike, MetricSpec, build_metrics
from ragrecall._running.store import Record

from ..base import (
    BlockingEngine,
    Outcome,
    RunSettings,
    identities,
    open_results,
    unique_names,
)
from .api import BatchAPI, ProviderError
from .batches import BatchSettings
from .exchange import Exchange, batch_judge
from .journal import Journal, journal_path
from .rounds import run_rounds

__all__ = ["BatchEngine", "MetricFactory"]

MetricFactory = Callable[[BaseChatModel], Metric[RecallResult]]


@dataclass(frozen=True)
class BatchEngine(BlockingEngine):
    """Scores through the judge provider's Batch API (OpenAI's, or a server that speaks it):
    typically half the price, answered within ``completion_window``; the run blocks until
    every sample is scored, polling every ``poll_interval`` seconds.

    ``judge``: ``"openai:MODEL"`` or a ``ChatOpenAI`` (default: the first metric spec's
    judge); each metric is built on a copy of it whose requests are answered from the
    batches, so metrics are given as names, ``MetricSpec``s or factories taking the judge
    (names and specs left on ``strategy="auto"`` use the batched attribution: two rounds a
    sample, claims then verdicts). ``out`` (required) is the results file ``eval --out``
    writes; the batch ids and every answer are journaled beside it (``OUT.batches.jsonl``).
    ``timeout``: seconds for each call to the Batch API (uploads, status checks); a metric's
    replayed judge calls have their answers at hand and need none. The budget counts every
    request sent as a call; no more are sent once they would not fit."""

    judge: JudgeLike = None
    poll_interval: float = 30.0
    completion_window: str = "24h"
    limits: BatchSettings = field(default_factory=BatchSettings)

    name: ClassVar[str] = "batch"
    out_kind: ClassVar[str] = "file"
    options: ClassVar[frozenset[str]] = frozenset({"judge", "poll_interval", "completion_window"})
    interrupted_note: ClassVar[str] = (
        " (batches sent go on at the provider: run again to collect them)"
    )

    def score(
        self,
        samples: Sequence[Sample],
        metrics: Sequence[MetricLike],
        *,
        out: Path | None,
        budget: Budget,
        on_record: Callable[[Record], None],
        settings: RunSettings,
    ) -> Outcome:
        if out is None:
            raise ValueError(
                "the batch engine needs --out (out= in Python): a batch run is resumed from it"
            )
        if settings.repeats != 1:
            raise ValueError("the batch engine takes no repeats: a repeat sends the same request")
        if self.poll_interval < 0:
            raise ValueError("poll_interval must be at least 0")
        Journal.open(journal_path(out)).close()  # a journal it cannot read: refused now
        judge = self._judge(metrics)
        exchange = Exchange()
        chat = batch_judge(judge, exchange)
        assert isinstance(judge, ChatOpenAI)  # batch_judge refused any other
        client = judge.root_client.with_options(max_retries=5)
        if settings.timeout is not None:
            client = client.with_options(timeout=settings.timeout)
        api = BatchAPI(client, self.completion_window)
        built = build_metrics(
            [_batched(m) for m in metrics], chat, MetricOptions(strategy="batched")
        )
        names = unique_names(built)
        ids = identities(samples)
        store, todo, resumed = open_results(out, names, 1, ids, on_record, settings.notify)
        journal = Journal.open(journal_path(out))
        if journal.running:
            settings.notify(
                f"resuming: {len(journal.running)} batches still running, from {journal.path}"
            )
        try:
            run_rounds(
                samples,
                built,
                todo=todo,
                ids=ids,
                store=store,
                journal=journal,
                api=api,
                exchange=exchange,
                budget=budget,
                on_record=on_record,
                settings=replace(self.limits, poll_interval=self.poll_interval),
                notify=settings.notify,
                max_retries=settings.max_retries,
            )
        except ProviderError as error:
            raise ProviderError(
                f"{error}; the samples finished are in {out}, the batches sent in "
                f"{journal.path}: run the same command again to go on",
                error.status,
            ) from None
        finally:
            journal.close()
            store.close()
        return Outcome(names, resumed, len(todo), journal.usage)

    def _judge(self, metrics: Sequence[MetricLike]) -> BaseChatModel:
        if self.judge is not None:
            return resolve_judge(self.judge)
        spec = next((m for m in metrics if isinstance(m, MetricSpec) and m.cls.uses_judge), None)
        if spec is None:
            raise ValueError(
                "the batch engine needs a judge: BatchEngine(judge='openai:MODEL'), or "
                "metrics given as MetricSpecs naming one"
            )
        return resolve_judge(spec.judge)


def _batched(value: MetricLike) -> MetricLike:
    """A spec of settings by name left on ``strategy="auto"``: batched (one request a
    sample and round) unless per-claim is asked for."""
    named = value.named if isinstance(value, MetricSpec) else None
    if isinstance(value, MetricSpec) and named is not None and named.strategy == "auto":
        return replace(value, named=replace(named, strategy="batched"))
    return value
