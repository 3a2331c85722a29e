"""Paired statistics in plain Python (no scipy), public for your own comparisons.

A seeded percentile-bootstrap confidence interval for a mean, a paired sign-flip permutation
test (exact up to 16 non-zero differences, Monte Carlo beyond), and the Wilcoxon signed-rank
test (exact distribution up to 50 non-zero differences, normal approximation with tie
correction beyond). For reading a non-significant comparison: the paired effect size
(Cohen's d_z), the smallest p-value the exact sign-flip test can reach, and the minimum
detectable mean difference (normal approximation). For agreement with people's labels:
balanced accuracy, Cohen's kappa, the expected calibration error of a probability (plain, and
debiased beside what a perfectly calibrated judge would show), the Brier score and log loss, and
EM for a shift in the share of positives (Saerens et al. 2002). For a judge's own uncertainty:
the interval of a share of uncertain items, independent (the Poisson-binomial distribution) or
correlated (one latent factor), and split-conformal intervals from labelled answers. For a judge's
bias: prediction-powered inference (PPI++), a dataset's mean recall, or a paired difference,
corrected by people's labels on a random few answers, with an interval; and Student's t
quantile it uses.
"""

from __future__ import annotations

import itertools
import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ragrecall._stats.calibration import (
    ECE_MIN_LABELS,
    PriorShift,
    brier_score,
    calibrated_ece,
    debiased_ece,
    log_loss,
    prior_shift,
)
from ragrecall._stats.intervals import (
    CLAIM_CORRELATION,
    CONFORMAL_MIN_LABELS,
    conformal_interval,
    conformal_radius,
    share_interval,
)
from ragrecall._stats.ppi import PPI_MIN_LABELS, PPIResult, ppi_difference, ppi_mean, t_quantile

__all__ = [
    "CLAIM_CORRELATION",
    "CONFORMAL_MIN_LABELS",
    "ECE_MIN_LABELS",
    "PPI_MIN_LABELS",
    "PPIResult",
    "PriorShift",
    "WilcoxonResult",
    "balanced_accuracy",
    "bootstrap_ci",
    "brier_score",
    "calibrated_ece",
    "cohen_kappa",
    "conformal_interval",
    "conformal_radius",
    "debiased_ece",
    "expected_calibration_error",
    "log_loss",
    "mean",
    "minimum_detectable_difference",
    "paired_effect_size",
    "ppi_difference",
    "ppi_mean",
    "prior_shift",
    "ranks",
    "share_interval",
    "sign_flip_test",
    "smallest_p_value",
    "t_quantile",
    "wilcoxon_signed_rank",
]

EXACT_SIGN_FLIP_MAX = 16
EXACT_WILCOXON_MAX = 50
_TOLERANCE = 1e-12


def mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


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
    rng = random.Random(seed)
    n = len(values)
    means = sorted(math.fsum(rng.choices(values, k=n)) / n for _ in range(resamples))
    tail = (1 - confidence) / 2
    return _quantile(means, tail), _quantile(means, 1 - tail)


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


def _sample_sd(values: Sequence[float]) -> float:
    """Sample standard deviation (n - 1 denominator); needs at least two values. Exactly 0
    for identical values (their float mean can be off by an ulp)."""
    if all(v == values[0] for v in values):
        return 0.0
    centre = mean(values)
    return math.sqrt(math.fsum((v - centre) ** 2 for v in values) / (len(values) - 1))


def paired_effect_size(diffs: Sequence[float]) -> float | None:
    """Cohen's d_z: mean(diffs) / sd(diffs), with the sample sd (n - 1).

    None for fewer than two differences. With sd 0: 0.0 if the mean is 0, else +/-inf with
    the sign of the mean.
    """
    if len(diffs) < 2:
        return None
    centre, sd = mean(diffs), _sample_sd(diffs)
    if sd == 0:
        return 0.0 if diffs[0] == 0 else math.copysign(math.inf, diffs[0])
    return centre / sd


def smallest_p_value(n_nonzero: int) -> float:
    """The smallest two-sided p-value the exact sign-flip test can give with ``n_nonzero``
    non-zero differences: 2 / 2^n (only the two all-same-sign patterns), capped at 1."""
    if n_nonzero < 0:
        raise ValueError(f"n_nonzero must be >= 0, not {n_nonzero}")
    return min(2 / (1 << n_nonzero), 1.0)


def minimum_detectable_difference(
    diffs: Sequence[float], *, alpha: float = 0.05, power: float = 0.8
) -> float | None:
    """Smallest true mean difference a two-sided paired test at ``alpha`` detects with
    probability ``power`` on this many pairs: (z_{1-alpha/2} + z_power) * sd(diffs) / sqrt(n).

    Normal approximation with the sample sd of ``diffs`` standing in for the true sd. None for
    fewer than two differences. ``math.inf`` when the exact sign-flip test cannot reach
    ``alpha`` at all with the non-zero differences present (``smallest_p_value(n_nonzero) >
    alpha``, e.g. 4 pairs at 0.05, or all differences 0): no difference is detectable then.
    Otherwise 0.0 when the sd is 0.
    """
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise ValueError(f"alpha and power must be in (0, 1), not {alpha} and {power}")
    if len(diffs) < 2:
        return None
    if smallest_p_value(sum(d != 0 for d in diffs)) > alpha:
        return math.inf
    z = statistics.NormalDist().inv_cdf
    return (z(1 - alpha / 2) + z(power)) * _sample_sd(diffs) / math.sqrt(len(diffs))


def balanced_accuracy(truth: Sequence[bool], predicted: Sequence[bool]) -> float | None:
    """The mean of the recall on each class (None unless both classes occur in ``truth``)."""
    positives = [p for t, p in zip(truth, predicted, strict=True) if t]
    negatives = [not p for t, p in zip(truth, predicted, strict=True) if not t]
    if not positives or not negatives:
        return None
    return (sum(positives) / len(positives) + sum(negatives) / len(negatives)) / 2


def cohen_kappa(truth: Sequence[bool], predicted: Sequence[bool]) -> float | None:
    """Agreement beyond chance of two binary raters (None when chance agreement is total)."""
    n = len(truth)
    if not n:
        return None
    observed = sum(t == p for t, p in zip(truth, predicted, strict=True)) / n
    yes_t, yes_p = sum(truth) / n, sum(predicted) / n
    chance = yes_t * yes_p + (1 - yes_t) * (1 - yes_p)
    return None if chance >= 1 else (observed - chance) / (1 - chance)


def expected_calibration_error(
    probabilities: Sequence[float], truth: Sequence[bool], bins: int = 10
) -> float | None:
    """The mean gap between stated probability and observed frequency over ``bins`` equal-width
    bins, weighted by their sizes (None for no items)."""
    if not probabilities:
        return None
    total = 0.0
    for k in range(bins):
        idx = [i for i, x in enumerate(probabilities) if min(int(x * bins), bins - 1) == k]
        if idx:
            stated = sum(probabilities[i] for i in idx) / len(idx)
            observed = sum(truth[i] for i in idx) / len(idx)
            total += abs(stated - observed) * len(idx)
    return total / len(probabilities)
