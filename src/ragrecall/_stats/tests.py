"""Paired tests and bootstrap intervals: the mean, seeded percentile bootstraps (of a mean, and
of any statistic of resampled items), the paired sign-flip permutation test (exact up to 16
non-zero differences, Monte Carlo beyond) and the Wilcoxon signed-rank test (exact up to 50,
normal approximation with tie correction beyond)."""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "EXACT_SIGN_FLIP_MAX",
    "EXACT_WILCOXON_MAX",
    "WilcoxonResult",
    "bootstrap_ci",
    "bootstrap_interval",
    "mean",
    "ranks",
    "sign_flip_test",
    "wilcoxon_signed_rank",
]

EXACT_SIGN_FLIP_MAX = 16
EXACT_WILCOXON_MAX = 50
_TOLERANCE = 1e-12


def mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def _draws(n: int, resamples: int, seed: int) -> Iterator[list[int]]:
    """``resamples`` seeded resamples of the item indices ``0 .. n-1``, with replacement."""
    rng = random.Random(seed)
    for _ in range(resamples):
        yield rng.choices(range(n), k=n)


def bootstrap_ci(
    values: Sequence[float],
    *,
    resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval for the mean of ``values`` (seeded, reproducible)."""
    if not values:
        raise ValueError("bootstrap_ci needs at least one value")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), not {confidence}")
    n = len(values)
    means = sorted(math.fsum(values[i] for i in idx) / n for idx in _draws(n, resamples, seed))
    tail = (1 - confidence) / 2
    return _quantile(means, tail), _quantile(means, 1 - tail)


def bootstrap_interval(
    stat: Callable[[Sequence[int]], float | None], n: int, resamples: int, seed: int
) -> tuple[float, float] | None:
    """Seeded percentile 95% interval of ``stat`` over resampled item indices (the same draws
    as ``bootstrap_ci``; the lower order statistic, not interpolated). A resample where
    ``stat`` is None is dropped; None for fewer than 2 items, or when half the resamples
    give None."""
    if n < 2:
        return None
    values = sorted(v for v in map(stat, _draws(n, resamples, seed)) if v is not None)
    if len(values) < resamples // 2:
        return None
    return values[int(0.025 * (len(values) - 1))], values[int(0.975 * (len(values) - 1))]


def _quantile(ordered: Sequence[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default)."""
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def sign_flip_test(
    diffs: Sequence[float],
    *,
    resamples: int = 10_000,
    seed: int = 0,
    exact_max: int = EXACT_SIGN_FLIP_MAX,
) -> float:
    """Two-sided p-value of the paired permutation test on the mean difference.

    Under the null hypothesis each difference is as likely to have either sign. Exact
    (all 2^n sign patterns) for up to ``exact_max`` non-zero differences; otherwise Monte Carlo
    with ``resamples`` seeded draws and the (count + 1) / (resamples + 1) correction.
    """
    nonzero = [d for d in diffs if d != 0]
    if not nonzero:
        return 1.0
    observed = abs(math.fsum(nonzero))
    if len(nonzero) <= exact_max:
        extreme = 0
        for signs in itertools.product((1, -1), repeat=len(nonzero)):
            total = abs(math.fsum(s * d for s, d in zip(signs, nonzero, strict=True)))
            extreme += total >= observed - _TOLERANCE
        return extreme / (1 << len(nonzero))
    rng = random.Random(seed)
    extreme = 0
    for _ in range(resamples):
        total = abs(math.fsum(d if rng.random() < 0.5 else -d for d in nonzero))
        extreme += total >= observed - _TOLERANCE
    return (extreme + 1) / (resamples + 1)


@dataclass(frozen=True)
class WilcoxonResult:
    """``statistic``: W+, the sum of the ranks of the positive differences; ``n``: the non-zero
    differences ranked; ``z``: the normal score (also given when the p-value is exact)."""

    statistic: float
    n: int
    z: float
    p_value: float
    method: Literal["exact", "normal"]


def ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks; ties get the mean of the ranks they span."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def wilcoxon_signed_rank(
    diffs: Sequence[float],
    *,
    method: Literal["auto", "exact", "normal"] = "auto",
    correction: bool = False,
) -> WilcoxonResult:
    """Two-sided Wilcoxon signed-rank test; zero differences are dropped (Wilcoxon's method).

    ``exact``: the null distribution of W+ over all sign patterns, by dynamic programming on
    the (tie-averaged) ranks, so it stays exact with ties. ``normal``: z with the tie-corrected
    variance n(n+1)(2n+1)/24 - sum(t^3 - t)/48, optionally with a continuity correction.
    ``auto``: exact up to 50 non-zero differences.
    """
    nonzero = [d for d in diffs if d != 0]
    n = len(nonzero)
    if n == 0:
        return WilcoxonResult(0.0, 0, 0.0, 1.0, "exact")
    rank = ranks([abs(d) for d in nonzero])
    w_plus = math.fsum(r for r, d in zip(rank, nonzero, strict=True) if d > 0)
    expected = n * (n + 1) / 4
    ties: dict[float, int] = {}
    for r in rank:
        ties[r] = ties.get(r, 0) + 1
    variance = n * (n + 1) * (2 * n + 1) / 24 - sum(t**3 - t for t in ties.values()) / 48
    deviation = abs(w_plus - expected)
    z = 0.0 if variance <= 0 else (w_plus - expected) / math.sqrt(variance)
    if method == "exact" or (method == "auto" and n <= EXACT_WILCOXON_MAX):
        return WilcoxonResult(w_plus, n, z, _exact_wilcoxon_p(rank, deviation), "exact")
    if variance <= 0:
        return WilcoxonResult(w_plus, n, 0.0, 1.0, "normal")
    shifted = max(deviation - (0.5 if correction else 0.0), 0.0)
    p = math.erfc(shifted / math.sqrt(variance) / math.sqrt(2))
    return WilcoxonResult(w_plus, n, z, min(p, 1.0), "normal")


def _exact_wilcoxon_p(rank: Sequence[float], deviation: float) -> float:
    """P(|W+ - E| >= deviation) with every sign pattern equally likely. Ranks are multiples
    of 1/2, so twice W+ is an integer and the distribution is a count per integer."""
    doubled = [round(2 * r) for r in rank]
    counts = [1] + [0] * sum(doubled)
    reach = 0
    for r in doubled:
        reach += r
        for total in range(reach, r - 1, -1):
            counts[total] += counts[total - r]
    expected2 = sum(doubled) / 2
    extreme = sum(c for t, c in enumerate(counts) if abs(t - expected2) >= 2 * deviation - 1e-9)
    return min(extreme / (1 << len(rank)), 1.0)
