"""A dataset run that survives: samples scored concurrently, each written as it finishes,
resumed from its results file, stopped at a judge budget.

``ragrecall eval`` is this plus argument parsing and printing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ._data import SampleId, sample_ids
from ._evaluate import astream
from ._metrics.base import Metric
from ._progress import progress
from ._results_file import Record, ResultsFile
from ._schemas import RecallResult, Sample, Usage

__all__ = ["Budget", "Identity", "identities", "pending", "score_samples"]


@dataclass
class Budget:
    """Judge calls and tokens a run may spend; ``spent`` once either is reached."""

    max_calls: int | None = None
    max_tokens: int | None = None
    usage: Usage = field(default_factory=Usage)
    spent: bool = False

    def add(self, usage: Usage) -> None:
        self.usage = self.usage + usage
        tokens = self.usage.prompt_tokens + self.usage.completion_tokens
        if (self.max_calls is not None and self.usage.calls >= self.max_calls) or (
            self.max_tokens is not None and tokens >= self.max_tokens
        ):
            self.spent = True


Identity = tuple[SampleId, str]  # a sample's id and its content digest


def identities(samples: Sequence[Sample]) -> list[Identity]:
    """Each sample's id and content digest, computed once per run (both hash the sample)."""
    return list(zip(sample_ids(samples), (s.content_key() for s in samples), strict=True))


def pending(ids: Sequence[Identity], done: Mapping[SampleId, str]) -> list[int]:
    """Indices of the samples not in ``done`` with their present content."""
    return [i for i, (sample_id, content) in enumerate(ids) if done.get(sample_id) != content]


async def score_samples(
    samples: Sequence[Sample],
    metrics: Sequence[Metric[RecallResult]],
    *,
    ids: Sequence[Identity],
    store: ResultsFile | None,
    budget: Budget,
    on_record: Callable[[Record], None],
    concurrency: int | None = None,
    timeout: float | None = None,
    repeats: int = 1,
    show_progress: bool | None = None,
) -> None:
    """Score the samples not yet in ``store`` with their present content; append each as it
    finishes and hand it to ``on_record``. No sample is submitted once the budget is spent
    (those in flight finish). ``ids`` are the samples' ``identities``."""
    todo = pending(ids, store.done) if store is not None else list(range(len(samples)))
    stream = astream(
        [samples[i] for i in todo],
        metrics,
        concurrency=concurrency,
        timeout=timeout,
        repeats=repeats,
        skip=lambda _: budget.spent,
    )
    with progress(len(todo), show_progress) as advance:
        async for scored in stream:
            index = todo[scored.index]
            (key, occurrence), content = ids[index]
            record = Record(key, index, scored.sample, scored.results, occurrence, content)
            if store is not None:
                store.append(record)
            on_record(record)
            budget.add(sum((r.usage for r in scored.results.values()), Usage()))
            advance()
