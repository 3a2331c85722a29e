"""Time windows of records, and the estimates and test ``watch`` builds on them.

``windows`` cuts records into spans of time aligned on the UTC epoch (``"1h"``: clock hours,
``"1d"``: UTC days; the empty ones between kept) or into runs of ``N`` records in time order;
``estimate`` is a mean with its interval (Student's t, or PPI++ with people's labels);
``welch`` the one-sided test of a drop between two estimates.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from .._core.errors import SampleError
from .._running.store import Record
from .._stats.ppi import PPI_MIN_LABELS, _t_cdf, t_quantile
from .corrected import AnswerLabel, corrected_mean

__all__ = ["Estimate", "describe", "estimate", "parse_window", "scored", "welch", "windows"]

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


@dataclass(frozen=True)
class Estimate:
    """A mean and its interval: the judge's (``method`` ``"t"``: Student's t) or corrected by
    people's labels (``"ppi"``); ``std_error`` and ``df`` feed the drop test."""

    mean: float
    low: float
    high: float
    std_error: float
    df: int
    method: str
    labels: int = 0


def parse_window(text: str) -> timedelta:
    """``"15m"``, ``"1h"``, ``"1d"``, ``"2w"``, ``"30s"`` as a span of time (ValueError)."""
    found = re.fullmatch(r"\s*(\d+)\s*([smhdw])\s*", text)
    if found is None or int(found.group(1)) == 0:
        raise ValueError(
            f"a window is a whole number and a unit (s, m, h, d, w), e.g. 15m, 1h, 1d; not {text!r}"
        )
    return timedelta(seconds=int(found.group(1)) * _UNITS[found.group(2)])


def describe(window: timedelta | int) -> str:
    if isinstance(window, int):
        return f"{window} records"
    seconds = int(window.total_seconds())
    for unit, size in sorted(_UNITS.items(), key=lambda kv: -kv[1]):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"  # pragma: no cover (every whole second divides by 1)


def _when(record: Record) -> datetime | None:
    when = record.timestamp
    if when is not None and when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)  # a time without a zone is read as UTC
    return when


def windows(
    records: Sequence[tuple[str, Record]], window: timedelta | int
) -> tuple[list[list[Record]], list[tuple[datetime | None, datetime | None]]]:
    """The records per window, in time order (every window from the first to the last, the
    empty ones included), and each window's bounds."""
    times = [_when(r) for _, r in records]
    if isinstance(window, int):
        if window < 1:
            raise SampleError(f"a window of records holds at least 1, not {window}")
        order = list(range(len(records)))
        if all(t is not None for t in times):
            order.sort(key=lambda i: times[i])  # type: ignore[arg-type,return-value]
        ordered = [records[i][1] for i in order]
        groups = [ordered[i : i + window] for i in range(0, len(ordered), window)]
        return groups, [(None, None)] * len(groups)
    missing = next((where for (where, _), t in zip(records, times, strict=True) if t is None), None)
    if missing is not None:
        count = sum(t is None for t in times)
        raise SampleError(
            f"{missing}: no timestamp ({count} of {len(records)} records have none: written by "
            "a Ray run or a ragrecall before 0.1): window by record order with "
            "--window-records N (window=N)"
        )
    if window <= timedelta(0):
        raise SampleError(f"a window must be longer than 0, not {window}")
    slot = [int((t - _EPOCH) // window) for t in times]  # type: ignore[operator]
    low = min(slot)
    spans: list[list[Record]] = [[] for _ in range(max(slot) - low + 1)]
    for (_, record), s in sorted(zip(records, slot, strict=True), key=lambda x: x[1]):
        spans[s - low].append(record)
    bounds: list[tuple[datetime | None, datetime | None]] = [
        (_EPOCH + (low + i) * window, _EPOCH + (low + i + 1) * window) for i in range(len(spans))
    ]
    return spans, bounds


def scored(records: Sequence[Record], metric: str) -> int:
    return sum(r.score(metric) is not None for r in records)


def estimate(
    records: Sequence[Record],
    metric: str,
    answers: Sequence[AnswerLabel],
    confidence: float,
) -> Estimate | None:
    """The judge's mean of ``records`` with its t interval; with ``answers``, the mean
    corrected by them, or None where fewer than ``PPI_MIN_LABELS`` label these records."""
    if answers:
        here = {(r.key, r.occurrence, r.content) for r in records if r.score(metric) is not None}
        matched = sum(
            (x.key, x.occurrence, x.content) in here for x in answers if x.metric == metric
        )
        if matched < PPI_MIN_LABELS:
            return None
        p = corrected_mean(records, answers, metric, confidence=confidence).ppi
        return Estimate(p.estimate, p.low, p.high, p.std_error, p.labels - 2, "ppi", p.labels)
    scores = [s for s in (r.score(metric) for r in records) if s is not None]
    if not scores:
        return None
    n, mean = len(scores), math.fsum(scores) / len(scores)
    if n < 2:
        return Estimate(mean, 0.0, 1.0, math.inf, 1, "t")
    se = math.sqrt(statistics.variance(scores, mean) / n)
    half = t_quantile((1 + confidence) / 2, n - 1) * se
    return Estimate(mean, max(0.0, mean - half), min(1.0, mean + half), se, n - 1, "t")


def welch(base: Estimate, now: Estimate) -> tuple[float, float]:
    """Welch's t of ``base.mean - now.mean`` and its one-sided p-value."""
    va, vb = base.std_error**2, now.std_error**2
    if va + vb == 0:
        return (math.inf, 0.0) if base.mean > now.mean else (0.0, 1.0)
    statistic = (base.mean - now.mean) / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / max(base.df, 1) + vb**2 / max(now.df, 1))
    df_int = max(2, int(df))
    if df_int > 200:
        return statistic, 1 - statistics.NormalDist().cdf(statistic)
    return statistic, 1 - _t_cdf(statistic, df_int)
