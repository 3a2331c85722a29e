"""The summary of an ``eval`` run, gathered one record at a time in bounded memory.

Per metric it keeps the scores (floats, for the mean and its bootstrap CI), the unscorable
count and, with repeats, each sample's spread; of the records themselves only the few it prints
(the lowest-scoring and the noisiest). A run of any size can be summarised while its records
stream from the judge or from a results file. It returns data; the command line renders it
(``cli/_report.py``).
"""

from __future__ import annotations

import heapq
import itertools
import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .._running.store import Record
from .._stats.tests import bootstrap_ci

__all__ = ["MetricSummary", "RunSummary", "summarize"]


@dataclass
class MetricSummary:
    name: str
    total: int = 0
    scores: list[float] = field(default_factory=list)
    stds: list[float] = field(default_factory=list)  # per sample, with repeats
    runs: int = 0  # the most runs a sample had (repeats)
    judge_variance: float = 0.0  # summed over samples: the variance of each recall that the
    # claims' P(supported) imply (0 for claims decided without logprobs)

    @property
    def unscorable(self) -> int:
        return self.total - len(self.scores)

    @property
    def unscorable_share(self) -> float:
        return self.unscorable / self.total if self.total else 0.0

    @property
    def mean(self) -> float | None:
        return statistics.fmean(self.scores) if self.scores else None

    @property
    def ci(self) -> tuple[float, float] | None:
        """95% bootstrap CI of the mean over samples."""
        return bootstrap_ci(self.scores, resamples=2000) if len(self.scores) > 1 else None

    @property
    def ci_with_judge(self) -> tuple[float, float] | None:
        """95% interval of the mean combining the spread between samples with the judge's
        uncertainty within each (normal approximation; None without logprobs)."""
        n = len(self.scores)
        if n < 2 or not self.judge_variance:
            return None
        between = statistics.variance(self.scores) / n
        half = 1.96 * math.sqrt(between + self.judge_variance / n**2)
        mean = statistics.fmean(self.scores)
        return max(0.0, mean - half), min(1.0, mean + half)

    @property
    def noise_se(self) -> float | None:
        """The standard error of the mean that judge noise alone accounts for (repeats)."""
        if not self.stds or not self.scores:
            return None
        return math.sqrt(sum(s * s / self.runs for s in self.stds)) / len(self.scores)

    def add(self, record: Record) -> None:
        self.total += 1
        score = record.score(self.name)
        if score is not None:
            self.scores.append(score)
        result = record.results.get(self.name)
        if score is not None and result is not None and result.verdicts:
            ps = [v.p_counted() for v in result.verdicts]
            self.judge_variance += sum(p * (1 - p) for p in ps) / len(ps) ** 2
        runs = result.runs if result is not None else []
        self.runs = max(self.runs, len(runs))
        scored = [s for s in runs if s is not None]
        if len(scored) > 1:
            self.stds.append(statistics.stdev(scored))


def summarize(records: Iterable[Record], name: str) -> MetricSummary:
    summary = MetricSummary(name)
    for record in records:
        summary.add(record)
    return summary


class RunSummary:
    """Every metric's summary, the ``worst`` lowest-scoring records of the first metric and its
    ten noisiest samples across repeats."""

    def __init__(self, names: Sequence[str], worst: int):
        self.names = list(names)
        self.metrics = [MetricSummary(n) for n in names]
        self.count = 0
        self._worst_n = worst
        self._worst: list[tuple[float, int, Record]] = []  # a max-heap on score, by negation
        self._noisy: list[tuple[float, int, float, float, str]] = []  # a min-heap on std
        self._order = itertools.count()

    def add(self, record: Record) -> None:
        self.count += 1
        for summary in self.metrics:
            summary.add(record)
        name, order = self.names[0], next(self._order)
        score = record.score(name)
        if self._worst_n > 0 and score != 1.0:
            item = (1.0 if score is None else -score, -order, record)  # unscorable first
            if len(self._worst) < self._worst_n:
                heapq.heappush(self._worst, item)
            elif item > self._worst[0]:
                heapq.heapreplace(self._worst, item)
        result = record.results.get(name)
        runs = [s for s in (result.runs if result is not None else []) if s is not None]
        if len(runs) > 1:
            label = record.sample.user_input or record.key
            noisy = (statistics.stdev(runs), -order, min(runs), max(runs), label)
            if len(self._noisy) < 10:
                heapq.heappush(self._noisy, noisy)
            elif noisy > self._noisy[0]:
                heapq.heapreplace(self._noisy, noisy)

    def worst(self) -> list[Record]:
        """The lowest-scoring records of the first metric, lowest first (unscorable before)."""
        return [r for _, _, r in sorted(self._worst, reverse=True)]

    def noisiest(self) -> list[tuple[float, float, float, str]]:
        """The first metric's noisiest samples across repeats, noisiest first: (std, min,
        max, label)."""
        return [
            (std, low, high, label)
            for std, _, low, high, label in sorted(self._noisy, reverse=True)
        ]
