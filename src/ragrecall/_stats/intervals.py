"""Per-answer intervals of a recall: from the judge's P(supported) with the claims correlated,
or split-conformal from people's labels on whole answers.

An answer's claims do not hold or fail independently: one missing chunk takes several claims
with it, and a judge that misreads a passage misreads it for every claim it bears on. Treating
them as independent (the Poisson-binomial distribution) gives intervals that are too narrow.
``share_interval(p, correlation=rho)`` instead lets the claims share one latent factor (a
one-factor Gaussian copula, the probit model of correlated binary outcomes): claim i holds when
sqrt(rho) U + sqrt(1 - rho) E_i < Phi^-1(p_i), U and E_i independent standard normal. Each
claim keeps its own P(supported); given U the claims are independent (a Poisson-binomial), and
the share's distribution is that mixed over U (numerical integration). rho = 0 is the
Poisson-binomial; a claim the judge is certain about stays certain. With people's
labels on 20 or more whole answers, ``conformal_interval`` gives the split-conformal interval
judge recall +/- the ``level`` quantile of |human - judge| over the labelled answers (Vovk et
al. 2005; Lei et al. 2018): it covers at the stated rate whatever the judge, for answers drawn
like the labelled ones.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from statistics import NormalDist

__all__ = [
    "CLAIM_CORRELATION",
    "CONFORMAL_MIN_LABELS",
    "conformal_interval",
    "conformal_method",
    "conformal_radius",
    "correlated_method",
    "share_interval",
]

# The claims' latent correlation the results assume (benchmarks/intervals.py chose it on 79
# LFQA answers: 0.25 covers people's recall for 92.4 % of them, and 89.7 % of 97).
CLAIM_CORRELATION = 0.25
CONFORMAL_MIN_LABELS = 20
_TOLERANCE = 1e-12
_EPS = 1e-6


def share_interval(
    probabilities: Sequence[float], level: float = 0.9, *, correlation: float = 0.0
) -> tuple[float, float]:
    """The central ``level`` interval of the share of items that hold, item i holding with
    probability ``probabilities[i]``.

    ``correlation`` 0: the items are independent (exact: the Poisson-binomial distribution, by
    dynamic programming). Above 0: the items share one latent normal factor with this
    correlation (the module docstring); each keeps its own probability.
    """
    n = len(probabilities)
    if not n:
        raise ValueError("share_interval needs at least one probability")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), not {level}")
    if not 0 <= correlation <= 1:
        raise ValueError(f"correlation must be in [0, 1], not {correlation}")
    pmf = (
        _poisson_binomial(probabilities)
        if correlation == 0
        else _one_factor(probabilities, correlation)
    )
    tail = (1 - level) / 2
    cdf = list(itertools.accumulate(pmf))
    low = next(k for k, c in enumerate(cdf) if c > tail + _TOLERANCE)
    high = next((k for k, c in enumerate(cdf) if c >= 1 - tail - _TOLERANCE), n)
    return low / n, high / n


def _poisson_binomial(probabilities: Sequence[float]) -> list[float]:
    pmf = [1.0]
    for p in probabilities:
        pmf = [
            (pmf[k] if k < len(pmf) else 0.0) * (1 - p) + (pmf[k - 1] * p if k else 0.0)
            for k in range(len(pmf) + 1)
        ]
    return pmf


_NORMAL = NormalDist()
# The latent factor U on a grid over [-6, 6] with normal weights (the midpoint rule).
_NODES = [-6 + 12 * (i + 0.5) / 121 for i in range(121)]
_WEIGHTS = [_NORMAL.pdf(u) for u in _NODES]
_WEIGHTS = [w / math.fsum(_WEIGHTS) for w in _WEIGHTS]


def _one_factor(probabilities: Sequence[float], correlation: float) -> list[float]:
    """P(K = k) under the one-factor model: the Poisson-binomial given U, mixed over U."""
    if correlation >= 1:  # all claims follow U: K = #{i: U < Phi^-1(p_i)}
        correlation = 1 - 1e-9
    load, rest = math.sqrt(correlation), math.sqrt(1 - correlation)
    cuts = [
        -math.inf if p <= 0 else math.inf if p >= 1 else _NORMAL.inv_cdf(p) for p in probabilities
    ]
    pmf = [0.0] * (len(probabilities) + 1)
    for u, w in zip(_NODES, _WEIGHTS, strict=True):
        given = _poisson_binomial(
            [_NORMAL.cdf((c - load * u) / rest) if math.isfinite(c) else float(c > 0) for c in cuts]
        )
        for k, v in enumerate(given):
            pmf[k] += w * v
    return pmf


def conformal_radius(pairs: Sequence[tuple[float, float]], level: float = 0.9) -> float:
    """The split-conformal half-width from labelled answers' ``(judge recall, human recall)``
    pairs: the ceil((n + 1) ``level``)-th smallest |human - judge|, or 1.0 (the whole range)
    when there are too few pairs for that rank (fewer than ``level / (1 - level)``)."""
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), not {level}")
    residuals = sorted(abs(h - j) for j, h in pairs)
    for j, h in pairs:
        if not (0 <= j <= 1 and 0 <= h <= 1):
            raise ValueError(f"recalls must be in [0, 1], not ({j}, {h})")
    rank = math.ceil((len(residuals) + 1) * level - _TOLERANCE)
    return 1.0 if rank > len(residuals) else residuals[rank - 1]


def conformal_interval(
    judge_recall: float, pairs: Sequence[tuple[float, float]], level: float = 0.9
) -> tuple[float, float]:
    """The split-conformal ``level`` interval of people's recall of an answer the judge scored
    ``judge_recall``, from ``pairs`` of (judge recall, human recall) on labelled answers drawn
    like it: ``judge_recall`` +/- ``conformal_radius(pairs, level)``, clipped to [0, 1].

    It covers at least ``level`` of such answers (at most ``level + 1 / (n + 1)`` when the
    residuals have no ties). Raises ValueError below ``CONFORMAL_MIN_LABELS`` pairs.
    """
    if len(pairs) < CONFORMAL_MIN_LABELS:
        raise ValueError(
            f"conformal intervals need at least {CONFORMAL_MIN_LABELS} labelled answers, "
            f"not {len(pairs)}"
        )
    radius = conformal_radius(pairs, level)
    return max(0.0, judge_recall - radius), min(1.0, judge_recall + radius)


def correlated_method(correlation: float = CLAIM_CORRELATION) -> str:
    """``RecallResult.interval_method`` of an interval from correlated claims' P(supported)."""
    return f"correlated claims (one factor, correlation {correlation})"


def conformal_method(labels: int) -> str:
    """``RecallResult.interval_method`` of a split-conformal interval from ``labels`` answers."""
    return f"split-conformal ({labels} labelled answers)"
