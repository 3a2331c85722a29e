"""``ragrecall eval DATA --engine batch --out FILE``: the same run, its judge requests sent
through the provider's Batch API in rounds (see ``_batch.run``); the results file is the one
``eval`` writes, and the batches are journaled beside it, so a run started again collects
what is still running."""

from __future__ import annotations

import argparse
from typing import Literal

from .._batch.evaluate import BatchJudge
from .._batch.journal import Journal
from .._batch.run import journal_path
from .._errors import SampleError
from .._judge.resolve import JudgeLike, resolve_judge

__all__ = ["BATCHES_RUNNING", "batched", "open_batch"]

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
