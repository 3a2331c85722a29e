"""``ragrecall eval DATA --engine batch --out FILE``: the same run, its judge requests sent
through the provider's Batch API in rounds (see ``_batch.run``); the results file is the one
``eval`` writes, and the batches are journaled beside it, so a run started again collects
what is still running."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Literal

from rich.console import Console

from .._batch.evaluate import BatchJudge
from .._batch.journal import Journal
from .._batch.run import BatchSettings, journal_path, run_rounds
from .._errors import SampleError
from .._judge.resolve import JudgeLike, resolve_judge
from .._metrics.base import Metric
from .._results_file import Record, ResultsFile
from .._run import Budget, Identity
from .._schemas import RecallResult, Sample

__all__ = ["BATCHES_RUNNING", "batched", "open_batch", "score_in_batches"]

BATCHES_RUNNING = " (batches sent go on at the provider: run again to collect them)"


def open_batch(args: argparse.Namespace, judge: JudgeLike) -> BatchJudge:
    """The batch judge of ``--engine batch``; SampleError for what it cannot run with."""
    if args.out is None:
        raise SampleError("--engine batch needs --out (a batch run is resumed from it)")
    if args.repeats != 1:
        raise SampleError("--engine batch takes no --repeats: a repeat sends the same request")
    if args.poll < 0:
        raise SampleError("--poll must be at least 0")
    Journal.open(journal_path(args.out)).close()  # a journal it cannot read: exit 2, now
    return BatchJudge(resolve_judge(judge))


def batched(strategy: Literal["auto", "per_claim", "batched"]) -> Literal["per_claim", "batched"]:
    """The attribution strategy in batch mode: batched unless per-claim is asked for (one
    round of batches per claim)."""
    return "per_claim" if strategy == "per_claim" else "batched"


def score_in_batches(
    batch: BatchJudge,
    samples: Sequence[Sample],
    metrics: Sequence[Metric[RecallResult]],
    ids: Sequence[Identity],
    store: ResultsFile,
    budget: Budget,
    on_record: Callable[[Record], None],
    args: argparse.Namespace,
    err_console: Console,
) -> None:
    """Score the samples not in ``store`` through ``batch``, telling ``err_console`` of each
    batch sent and how it goes."""
    journal = Journal.open(journal_path(args.out))
    if journal.running:
        err_console.print(
            f"resuming: {len(journal.running)} batches still running, from {journal.path}"
        )
    try:
        run_rounds(
            samples,
            metrics,
            ids=ids,
            store=store,
            journal=journal,
            api=batch.api,
            exchange=batch.exchange,
            budget=budget,
            on_record=on_record,
            settings=BatchSettings(poll_interval=args.poll),
            notify=err_console.print,
        )
    finally:
        journal.close()
