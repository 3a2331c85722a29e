"""Prediction-powered inference: a judge's scores on every answer, people's on a few.

The estimator is PPI++ (Angelopoulos, Duchi, Zrnic 2024) for a mean, written for the design
ragrecall users have: the judge scores every answer of the dataset (the labelled ones included)
and people label a simple random sample of those answers. The target is the mean people would
give the whole dataset, a finite-population quantity, so this is the survey-sampling
difference / regression estimator (Cochran 1977, ch. 7) with its finite-population correction.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

PPI_MIN_LABELS = 10
_CORNISH_FISHER_DF = 200


@dataclass(frozen=True)
class PPIResult:
    """A corrected mean (or paired difference) with its interval.

    ``estimate``, ``low``, ``high``: the corrected value and its ``confidence`` interval
    (clipped to the possible range); ``std_error``: its standard error. ``method``: ``"ppi"``
    or ``"labels-only: ..."`` (why). ``labels``: labelled answers (or pairs) used; ``total``:
    answers (or pairs) in the dataset. ``judge_mean``: the judge's raw mean over all of them;
    ``judge_bias``: its mean minus people's on the labelled ones (positive: generous);
    ``lambda_``: the weight given to the judge (0: labels alone; 1: the plain difference
    estimator); ``rho``: the correlation of judge and people on the labelled ones (None when
    undefined). ``labels_only``: the interval from the labels alone, for comparing widths.
    """

    estimate: float
    low: float
    high: float
    confidence: float
    std_error: float
    method: str
    labels: int
    total: int
    judge_mean: float
    judge_bias: float
    lambda_: float
    rho: float | None
    labels_only: tuple[float, float]


def t_quantile(p: float, df: int) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom.

    Newton's method on the exact distribution function (the closed-form series for integer
    ``df``, Abramowitz and Stegun 26.7.3-4), started from the Cornish-Fisher expansion
    (26.7.5); the expansion alone above 200 degrees of freedom (within 1e-9 of the exact
    value there for 0.0005 <= p <= 0.9995).
    """
    if not 0 < p < 1:
        raise ValueError(f"p must be in (0, 1), not {p}")
    if isinstance(df, bool) or not isinstance(df, int) or df < 1:
        raise ValueError(f"df must be an integer >= 1, not {df!r}")
    if p < 0.5:
        return -t_quantile(1 - p, df)
    if df == 1:
        return math.tan(math.pi * (p - 0.5))
    if df == 2:
        return (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    t = _cornish_fisher(statistics.NormalDist().inv_cdf(p), df)
    if df > _CORNISH_FISHER_DF:
        return t
    log_norm = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    for _ in range(50):
        density = math.exp(log_norm - (df + 1) / 2 * math.log1p(t * t / df))
        step = (_t_cdf(t, df) - p) / density
        t -= step
        if abs(step) < 1e-12 * max(1.0, abs(t)):
            break
    return t


def _cornish_fisher(x: float, df: int) -> float:
    g1 = (x**3 + x) / 4
    g2 = (5 * x**5 + 16 * x**3 + 3 * x) / 96
    g3 = (3 * x**7 + 19 * x**5 + 17 * x**3 - 15 * x) / 384
    g4 = (79 * x**9 + 776 * x**7 + 1482 * x**5 - 1920 * x**3 - 945 * x) / 92160
    return x + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4


def _t_cdf(t: float, df: int) -> float:
    """P(T <= t) for integer ``df`` >= 2, by the finite series in cos(theta)."""
    theta = math.atan(t / math.sqrt(df))
    c2 = math.cos(theta) ** 2
    if df % 2:
        term, total = math.cos(theta), math.cos(theta)
        for k in range(3, df - 1, 2):
            term *= c2 * (k - 1) / k
            total += term
        central = 2 / math.pi * (theta + math.sin(theta) * total)
    else:
        term, total = 1.0, 1.0
        for k in range(2, df - 1, 2):
            term *= c2 * (k - 1) / k
            total += term
        central = math.sin(theta) * total
    return 0.5 + central / 2


def ppi_mean(
    judge_all: Sequence[float],
    judge_labeled: Sequence[float],
    human_labeled: Sequence[float],
    *,
    confidence: float = 0.9,
) -> PPIResult:
    """The dataset's mean recall as people would score it, from the judge's scores on every
    answer and people's on a labelled few.

    ``judge_all``: the judge's score of every answer in the dataset, labelled ones included;
    ``judge_labeled``, ``human_labeled``: the judge's and people's scores of the labelled
    answers, in the same order. Scores are in [0, 1]. Assumption: the labelled answers are a
    simple random sample of the dataset's (drawn without replacement, every answer equally
    likely, whatever its scores); answers picked for being hard or uncertain break it.

    Estimate: mean(human_labeled) - lambda * (mean(judge_labeled) - mean(judge_all)).
    lambda: PPI++'s power tuning, Cov / ((1 + n/N') Var) over the labelled answers for N'
    unlabelled ones; here the judge's mean over the dataset has no sampling error, so the
    1 + n/N' term drops and lambda is the regression slope of people's score on the judge's,
    clipped to [0, 1]. Interval: Student's t with n - 2 degrees of freedom, standard error
    sqrt((1 - n/N) * s^2 / n), s^2 the variance of human - lambda * judge over the labelled
    answers (n - 2 denominator), N = len(judge_all). With fewer than ``PPI_MIN_LABELS`` (10)
    labelled answers it returns the labels-only interval (t with n - 1 degrees of freedom, the
    same correction) and says so in ``method``. ValueError: no labels, labelled lists of
    unequal lengths, ``judge_all`` shorter than them, or a score not in [0, 1].
    """
    judge = _scores(judge_all, "judge_all")
    labeled = _scores(judge_labeled, "judge_labeled")
    human = _scores(human_labeled, "human_labeled")
    _check_design(len(judge), len(labeled), len(human), confidence, "ppi_mean")
    return _ppi(judge, labeled, human, confidence, 0.0, 1.0)


def ppi_difference(
    judge_all: Sequence[tuple[float, float]],
    judge_labeled: Sequence[tuple[float, float]],
    human_labeled: Sequence[tuple[float, float]],
    *,
    confidence: float = 0.9,
) -> PPIResult:
    """The mean paired difference A - B as people would score it: ``ppi_mean`` on per-task
    differences.

    Each item is one task's ``(score of A, score of B)``: ``judge_all`` for every task of the
    dataset, ``judge_labeled`` and ``human_labeled`` for the labelled tasks, where people
    labelled both answers. The labelled tasks must be a simple random sample of the tasks.
    ``judge_bias`` is then the judge's bias on A minus its bias on B; ``rho`` the correlation
    of the judge's and people's differences.
    """
    judge = _differences(judge_all, "judge_all")
    labeled = _differences(judge_labeled, "judge_labeled")
    human = _differences(human_labeled, "human_labeled")
    _check_design(len(judge), len(labeled), len(human), confidence, "ppi_difference")
    return _ppi(judge, labeled, human, confidence, -1.0, 1.0)


def _scores(values: Sequence[float], name: str) -> list[float]:
    out = [float(v) for v in values]
    bad = next((v for v in out if not 0 <= v <= 1), None)
    if bad is not None:
        raise ValueError(f"{name} must hold finite scores in [0, 1], found {bad}")
    return out


def _differences(pairs: Sequence[tuple[float, float]], name: str) -> list[float]:
    if any(len(pair) != 2 for pair in pairs):
        raise ValueError(f"{name} must hold (A, B) pairs, one per task")
    a = _scores([pair[0] for pair in pairs], name)
    b = _scores([pair[1] for pair in pairs], name)
    return [x - y for x, y in zip(a, b, strict=True)]


def _check_design(total: int, labeled: int, human: int, confidence: float, name: str) -> None:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), not {confidence}")
    if labeled != human:
        raise ValueError(
            f"judge_labeled and human_labeled must have equal lengths, not {labeled} and {human}"
        )
    if not human:
        raise ValueError(
            f"{name} needs labelled answers: have people label at least {PPI_MIN_LABELS} "
            "answers picked at random"
        )
    if total < labeled:
        raise ValueError(
            f"judge_all ({total}) must score every answer, the {labeled} labelled ones included"
        )


def _ppi(
    judge: list[float],
    labeled: list[float],
    human: list[float],
    confidence: float,
    floor: float,
    ceiling: float,
) -> PPIResult:
    n, total = len(human), len(judge)
    shrink = 1 - n / total
    judge_mean, labeled_mean, human_mean = _mean(judge), _mean(labeled), _mean(human)
    sxx, syy, sxy = _cross(labeled, labeled), _cross(human, human), _cross(labeled, human)
    rho = sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else None
    tail = (1 + confidence) / 2

    def clip(value: float) -> float:
        return min(max(value, floor), ceiling)

    if n >= 2:
        se_labels = math.sqrt(shrink * syy / (n - 1) / n)
        half = t_quantile(tail, n - 1) * se_labels
        labels_only = (clip(human_mean - half), clip(human_mean + half))
    else:
        se_labels = math.inf if shrink > 0 else 0.0
        labels_only = (floor, ceiling) if shrink > 0 else (human_mean, human_mean)
    if n < PPI_MIN_LABELS:
        return PPIResult(
            clip(human_mean), *labels_only, confidence, se_labels,
            f"labels-only: fewer than {PPI_MIN_LABELS} labelled answers", n, total,
            judge_mean, labeled_mean - human_mean, 0.0, rho, labels_only,
        )  # fmt: skip
    lam = min(max(sxy / sxx, 0.0), 1.0) if sxx > 0 else 0.0
    estimate = human_mean - lam * (labeled_mean - judge_mean)
    residual = syy - 2 * lam * sxy + lam * lam * sxx
    std_error = math.sqrt(shrink * max(residual, 0.0) / (n - 2) / n)
    half = t_quantile(tail, n - 2) * std_error
    return PPIResult(
        clip(estimate), clip(estimate - half), clip(estimate + half), confidence, std_error,
        "ppi", n, total, judge_mean, labeled_mean - human_mean, lam, rho, labels_only,
    )  # fmt: skip


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def _cross(x: Sequence[float], y: Sequence[float]) -> float:
    """The sum of products of deviations from the means."""
    mx, my = _mean(x), _mean(y)
    return math.fsum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
