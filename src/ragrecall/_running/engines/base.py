"""The engine interface: one small protocol that every way of running a dataset implements.

An engine scores ``samples`` with ``metrics`` (``score`` blocks; ``ascore`` is its async twin,
as httpx has a sync and an async transport), writes each finished sample to its own results
store (``out``: a JSONL file locally and in batch mode, a directory of Parquet parts on Ray),
resumes from it (a sample already there with its present content is not scored again), hands
every record of the run (those resumed first) to ``on_record``, and starts no work the
``Budget`` does not admit. ``evaluate`` and ``ragrecall eval`` call nothing else, so neither
knows which engine runs (as httpx's client never knows which transport sends).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Protocol, runtime_checkable

from ragrecall._core.schemas import RecallResult, Sample, Usage
from ragrecall._io.samples import SampleId, sample_ids
from ragrecall._metrics.base import Metric

from ..budget import Budget
from ..spec import MetricLike
from ..store import Record, ResultsFile, read_file

__all__ = [
    "BlockingEngine",
    "Engine",
    "Identity",
    "Outcome",
    "RunSettings",
    "identities",
    "open_results",
    "pending",
    "unique_names",
]


@dataclass(frozen=True)
class RunSettings:
    """What every engine takes: ``repeats`` (judge each sample that many times),
    ``timeout`` and ``max_retries`` (each metric's own when None), ``show_progress``, and
    ``notify``, which hears what a run says as it goes (resuming, batches sent).

    ``concurrency``: samples scored at once, over the engine's own setting (given only to an
    engine whose ``options`` name it). ``skip``: leaves out the samples it returns (or
    resolves to) True for, asked as each is about to start (the local engine's only)."""

    repeats: int = 1
    timeout: float | None = None
    max_retries: int | None = None
    show_progress: bool | None = None
    notify: Callable[[str], None] = field(default=lambda _: None, compare=False)
    concurrency: int | None = None
    skip: Callable[[Sample], bool | Awaitable[bool]] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Outcome:
    """What a run left besides its records: its ``metrics`` by name, how many samples its
    results store already held
    (``resumed``), how many it set out to score (``todo``), and the judge ``usage`` of this
    run (what the budget counted)."""

    metrics: list[str] = field(default_factory=list)
    resumed: int = 0
    todo: int = 0
    usage: Usage = field(default_factory=Usage)


@runtime_checkable
class Engine(Protocol):
    """Where samples are scored. ``name`` is named in messages (``--workers is not taken by
    the batch engine``); ``out_kind``: what its ``out`` is (``"file"``: JSONL; ``"directory"``:
    Parquet parts); ``options`` are the settings its constructor takes (the CLI refuses a flag
    for another); ``interrupted_note`` is said after an interrupt (batch: what goes on)."""

    name: ClassVar[str]
    out_kind: ClassVar[str]
    options: ClassVar[frozenset[str]]
    interrupted_note: ClassVar[str]

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
        """Score the samples not yet in ``out``; every record of the run goes to
        ``on_record``. An interrupt stops the run with what finished saved."""
        ...

    async def ascore(
        self,
        samples: Sequence[Sample],
        metrics: Sequence[MetricLike],
        *,
        out: Path | None,
        budget: Budget,
        on_record: Callable[[Record], None],
        settings: RunSettings,
    ) -> Outcome:
        """``score``, awaited."""
        ...


Identity = tuple[SampleId, str]  # a sample's id and its content digest


def identities(samples: Sequence[Sample]) -> list[Identity]:
    """Each sample's id and content digest, computed once per run (both hash the sample)."""
    return list(zip(sample_ids(samples), (s.content_key() for s in samples), strict=True))


def pending(ids: Sequence[Identity], done: Mapping[SampleId, str]) -> list[int]:
    """Indices of the samples not in ``done`` with their present content."""
    return [i for i, (sample_id, content) in enumerate(ids) if done.get(sample_id) != content]


def unique_names(metrics: Sequence[Metric[RecallResult]]) -> list[str]:
    """The metrics' names; ValueError unless there are some, each once."""
    names = [m.name for m in metrics]
    if not metrics or len(set(names)) != len(names):
        raise ValueError(f"need one or more metrics with unique names, got {names}")
    return names


def open_results(
    out: Path,
    names: Sequence[str],
    repeats: int,
    ids: Sequence[Identity],
    on_record: Callable[[Record], None],
    notify: Callable[[str], None],
) -> tuple[ResultsFile, list[int], int]:
    """The results file ``out`` opened for a run (locally and in batch mode): its records of
    these samples as they are now handed to ``on_record``, the indices still to score, and
    how many were resumed."""
    store = ResultsFile.open(out, metrics=names, repeats=repeats)
    try:
        if store.repaired:
            notify(f"{out}: cut away a torn last line (an interrupted write)")
        todo = pending(ids, store.done)
        resumed = len(ids) - len(todo)
        if resumed:
            current = dict(ids)
            for record in read_file(out):
                if current.get(record.id) == record.content:
                    on_record(record)
            notify(f"resuming: {resumed} samples already in {out}, {len(todo)} to go")
    except BaseException:
        store.close()
        raise
    return store, todo, resumed


class BlockingEngine:
    """The base of an engine whose ``score`` blocks while it waits (on a provider's batches, on
    a cluster): ``ascore`` runs ``score`` in a thread of its own."""

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
        raise NotImplementedError

    async def ascore(
        self,
        samples: Sequence[Sample],
        metrics: Sequence[MetricLike],
        *,
        out: Path | None,
        budget: Budget,
        on_record: Callable[[Record], None],
        settings: RunSettings,
    ) -> Outcome:
        """``score`` in a thread of its own."""
        return await asyncio.to_thread(
            self.score,
            samples,
            metrics,
            out=out,
            budget=budget,
            on_record=on_record,
            settings=settings,
        )
