"""How well probabilities are calibrated, measured without fooling oneself, and how to move
them to data with another share of positives.

- ``brier_score`` and ``log_loss``: proper scoring rules (lower is better).
- ``debiased_ece``: the binned calibration error with the sampling noise taken out. The plain
  ECE of a perfectly calibrated judge is not 0 on a finite sample: each bin's observed
  frequency scatters around its stated probability. Per bin the squared gap is corrected by
  its expected noise, ybar (1 - ybar) / (n_b - 1) (Kumar, Liang, Ma 2019, "Verified uncertainty
  calibration"; Broecker 2012), and the root of the size-weighted mean is reported (an L2
  calibration error, in the units of a probability).
- ``calibrated_ece``: what that estimator shows for a perfectly calibrated judge at the same
  probabilities, by simulation (outcomes drawn from the probabilities themselves): the
  yardstick to read a measured ECE against.
- ``prior_shift``: EM for the share of positives in unlabelled data and the probabilities
  adjusted to it (Saerens, Latinne, Decaestecker 2002), for a judge calibrated on labels whose
  share of supported claims differs from the data's.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from .platt import logit

__all__ = [
    "ECE_MIN_LABELS",
    "PriorShift",
    "brier_score",
    "calibrated_ece",
    "debiased_ece",
    "log_loss",
    "prior_shift",
]

ECE_MIN_LABELS = 100  # below this many labelled claims, calibrate reports no ECE
_EPS = 1e-6


def brier_score(probabilities: Sequence[float], truth: Sequence[bool]) -> float:
    """The mean squared difference between probability and outcome (0 is perfect)."""
    _check(probabilities, truth)
    return math.fsum((p - t) ** 2 for p, t in zip(probabilities, truth, strict=True)) / len(truth)


def log_loss(probabilities: Sequence[float], truth: Sequence[bool]) -> float:
    """The mean negative log-likelihood, natural log, probabilities clipped to [1e-6, 1 - 1e-6]
    (so a confident mistake costs about 13.8, not infinity)."""
    _check(probabilities, truth)
    total = math.fsum(
        -math.log(min(max(p if t else 1 - p, _EPS), 1.0))
        for p, t in zip(probabilities, truth, strict=True)
    )
    return total / len(truth)


def debiased_ece(probabilities: Sequence[float], truth: Sequence[bool], bins: int = 10) -> float:
    """The debiased L2 calibration error over ``bins`` equal-width bins: the root of
    sum_b (n_b / n) [(ybar_b - pbar_b)^2 - ybar_b (1 - ybar_b) / (n_b - 1)], floored at 0. A
    bin with a single item tells nothing about its gap and adds 0."""
    _check(probabilities, truth)
    members: list[list[int]] = [[] for _ in range(bins)]
    for i, p in enumerate(probabilities):
        members[min(int(p * bins), bins - 1)].append(i)
    total = 0.0
    for idx in members:
        size = len(idx)
        if size < 2:
            continue
        stated = math.fsum(probabilities[i] for i in idx) / size
        observed = sum(truth[i] for i in idx) / size
        gap = (observed - stated) ** 2 - observed * (1 - observed) / (size - 1)
        total += size * gap
    return math.sqrt(max(total / len(truth), 0.0))


def calibrated_ece(
    probabilities: Sequence[float],
    *,
    bins: int = 10,
    draws: int = 200,
    seed: int = 0,
    quantile: float = 0.9,
) -> tuple[float, float]:
    """The ``debiased_ece`` a perfectly calibrated judge shows at these probabilities: the mean
    and the ``quantile`` over ``draws`` simulations, outcomes drawn from the probabilities
    themselves. A measured ECE at or below the quantile is what calibration alone would give."""
    if not probabilities:
        raise ValueError("calibrated_ece needs at least one probability")
    rng = random.Random(seed)
    values = sorted(
        debiased_ece(probabilities, [rng.random() < p for p in probabilities], bins)
        for _ in range(draws)
    )
    return math.fsum(values) / draws, values[min(int(quantile * draws), draws - 1)]


@dataclass(frozen=True)
class PriorShift:
    """``prior``: the share of positives EM finds in the new data; ``train_prior``: the share
    the probabilities were calibrated for; ``probabilities``: the new data's, adjusted;
    ``iterations``: EM steps taken; ``converged``: the prior moved less than the tolerance."""

    prior: float
    train_prior: float
    probabilities: list[float]
    iterations: int
    converged: bool

    @property
    def logit_shift(self) -> float:
        """What the shift adds to every logit: logit(prior) - logit(train_prior)."""
        return logit(self.prior) - logit(self.train_prior)


def prior_shift(
    probabilities: Sequence[float],
    train_prior: float,
    *,
    tolerance: float = 1e-6,
    max_iterations: int = 1000,
) -> PriorShift:
    """Re-estimate the share of positives in unlabelled data by EM, and adjust its probabilities.

    ``probabilities``: calibrated P(positive) of each unlabelled item, calibrated on labels with
    share of positives ``train_prior``. Each step re-weights every probability by the ratio of
    the current prior to the training one (Bayes' rule, the likelihoods unchanged) and takes the
    mean of the results as the next prior (Saerens, Latinne, Decaestecker 2002). Assumes only
    the share changed (label shift), not what a supported claim looks like.
    """
    if not probabilities:
        raise ValueError("prior_shift needs at least one probability")
    if not 0 < train_prior < 1:
        raise ValueError(f"train_prior must be in (0, 1), not {train_prior}")
    ps = [min(max(p, _EPS), 1 - _EPS) for p in probabilities]
    prior = train_prior
    adjusted = ps
    converged = False
    steps = 0
    for steps in range(1, max_iterations + 1):  # noqa: B007 (read after the loop)
        adjusted = _reweight(ps, train_prior, prior)
        new = min(max(math.fsum(adjusted) / len(adjusted), _EPS), 1 - _EPS)
        moved = abs(new - prior)
        prior = new
        if moved < tolerance:
            converged = True
            break
    return PriorShift(prior, train_prior, _reweight(ps, train_prior, prior), steps, converged)


def _reweight(ps: Sequence[float], old: float, new: float) -> list[float]:
    up, down = new / old, (1 - new) / (1 - old)
    return [up * p / (up * p + down * (1 - p)) for p in ps]


def _check(probabilities: Sequence[float], truth: Sequence[bool]) -> None:
    if not truth or len(probabilities) != len(truth):
        raise ValueError(
            f"need as many probabilities as outcomes, at least one: {len(probabilities)} "
            f"and {len(truth)}"
        )
