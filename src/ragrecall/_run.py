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
from ._metrics.estimate import Estimate
from ._progress import progress
from ._results_file import Record, ResultsFile
from ._schemas import RecallResult, Sample, Usage

__all__ = ["Budget", "Identity", "identities", "pending", "score_samples"]


@dataclass
class Budget:
    """Judge calls and tokens a run may spend (every attempt counts).

    A sample starts only if its estimated work fits beside what is spent and what the samples
    in flight have reserved; once one does not, no more start (``spent``). So the budget is
    overshot by at most what the samples in flight spend beyond their estimates (``over``).
    """

    max_calls: int | None = None
    max_tokens: int | None = None
    estimate: Callable[[Sample], Estimate] | None = None
    usage: Usage = field(default_factory=Usage)
    spent: bool = False
    _reserved: dict[int, list[tuple[int, int]]] = field(default_factory=dict)

    def admit(self, sample: Sample) -> bool:
        """Reserve ``sample``'s estimated calls and tokens; False once they do not fit."""
        if self.spent:
            return False
        if self.max_calls is None and self.max_tokens is None:
            return True
        est = self.estimate(sample) if self.estimate is not None else Estimate(calls=1)
        need = (est.calls, est.prompt_tokens + est.completion_tokens)
        calls, tokens = (a + b for a, b in zip(self._spent(), self._in_flight(), strict=True))
        if (self.max_calls is not None and calls + need[0] > self.max_calls) or (
            self.max_tokens is not None and tokens + need[1] > self.max_tokens
        ):
            self.spent = True
            return False
        self._reserved.setdefault(id(sample), []).append(need)
        return True

    def settle(self, sample: Sample, usage: Usage) -> None:
        """``sample`` finished with ``usage``: its reservation gives way to what it spent."""
        held = self._reserved.get(id(sample))
        if held:
            held.pop()
            if not held:
                del self._reserved[id(sample)]
        self.usage = self.usage + usage
        calls, tokens = self._spent()
        if (self.max_calls is not None and calls >= self.max_calls) or (
            self.max_tokens is not None and tokens >= self.max_tokens
        ):
            self.spent = True

    def over(self) -> str:
        """How far the run went past its budget ("" if it did not)."""
        calls, tokens = self._spent()
        parts = []
        if self.max_calls is not None and calls > self.max_calls:
            parts.append(f"{calls - self.max_calls} calls")
        if self.max_tokens is not None and tokens > self.max_tokens:
            parts.append(f"{tokens - self.max_tokens} tokens")
        return " and ".join(parts)

    def _spent(self) -> tuple[int, int]:
        return self.usage.calls, self.usage.prompt_tokens + self.usage.completion_tokens

    def _in_flight(self) -> tuple[int, int]:
        held = [need for needs in self._reserved.values() for need in needs]
        return sum(c for c, _ in held), sum(t for _, t in held)


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
    finishes and hand it to ``on_record``. A sample starts only if the budget admits it
    (those in flight finish). ``ids`` are the samples' ``identities``."""
    todo = pending(ids, store.done) if store is not None else list(range(len(samples)))
    stream = astream(
        [samples[i] for i in todo],
        metrics,
        concurrency=concurrency,
        timeout=timeout,
        repeats=repeats,
        skip=lambda sample: not budget.admit(sample),
    )
    with progress(len(todo), show_progress) as advance:
        async for scored in stream:
            index = todo[scored.index]
            (key, occurrence), content = ids[index]
            record = Record(key, index, scored.sample, scored.results, occurrence, content)
            if store is not None:
                store.append(record)
            on_record(record)
            budget.settle(scored.sample, sum((r.usage for r in scored.results.values()), Usage()))
            advance()
