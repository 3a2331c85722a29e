"""Per-answer recall intervals by simulation: correlated claims (``share_interval`` with a
claim correlation) and split-conformal intervals from labelled answers cover at their rate;
the independent-claims interval does not when claims are correlated."""

from __future__ import annotations

import math
import random
from statistics import NormalDist

import pytest

from ragrecall.stats import (
    CONFORMAL_MIN_LABELS,
    conformal_interval,
    conformal_radius,
    share_interval,
)

NORMAL = NormalDist()


def correlated_answer(rng: random.Random, rho: float) -> tuple[list[float], float]:
    """An answer of 3 to 10 claims with stated P(supported), and the share that holds when the
    claims share one latent factor with correlation ``rho`` (P stays each claim's marginal)."""
    p = [rng.uniform(0.05, 0.95) for _ in range(rng.randint(3, 10))]
    u = rng.gauss(0, 1)
    holds = [
        math.sqrt(rho) * u + math.sqrt(1 - rho) * rng.gauss(0, 1) < NORMAL.inv_cdf(q) for q in p
    ]
    return p, sum(holds) / len(holds)


def coverage(rho_true: float, rho_assumed: float, answers: int = 400) -> float:
    rng = random.Random(f"{rho_true}-{rho_assumed}")
    hits = 0
    for _ in range(answers):
        p, share = correlated_answer(rng, rho_true)
        low, high = share_interval(p, correlation=rho_assumed)
        hits += low <= share <= high
    return hits / answers


def test_the_correlated_interval_covers_correlated_claims() -> None:
    # A central interval of a discrete share covers at least 90 %; a little more, not much.
    assert 0.88 <= coverage(0.4, 0.4) <= 0.98


def test_the_independent_interval_misses_correlated_claims() -> None:
    assert coverage(0.4, 0.0) < 0.85
    assert coverage(0.0, 0.0) >= 0.88  # and it is right when they are independent


def test_correlation_widens_and_keeps_certain_claims_certain() -> None:
    p = [0.7, 0.8, 0.6, 0.9, 0.75, 0.85]
    widths = [
        (lambda lo_hi: lo_hi[1] - lo_hi[0])(share_interval(p, correlation=r))
        for r in (0.0, 0.2, 0.5, 0.9)
    ]
    assert widths == sorted(widths) and widths[-1] > widths[0]
    assert share_interval([1.0, 1.0, 0.0, 0.0], correlation=0.5) == (0.5, 0.5)
    assert share_interval([0.5] * 10, correlation=0.0) == (0.2, 0.8)
    with pytest.raises(ValueError, match="correlation"):
        share_interval([0.5], correlation=1.5)


def test_conformal_covers_at_its_rate() -> None:
    rng = random.Random(7)
    hits = total = 0
    for _ in range(300):
        pairs = []
        for _ in range(CONFORMAL_MIN_LABELS + 30):
            judge = rng.uniform(0.2, 0.7)
            pairs.append((judge, judge + rng.uniform(-0.2, 0.2) + 0.05))  # a judge biased down
        labelled, rest = pairs[:CONFORMAL_MIN_LABELS], pairs[CONFORMAL_MIN_LABELS:]
        for judge, human in rest:
            low, high = conformal_interval(judge, labelled)
            hits += low <= human <= high
            total += 1
    # continuous residuals: exactly ceil(21 * 0.9) / 21 = 0.905 in expectation
    assert 0.88 <= hits / total <= 0.93


def test_conformal_radius_and_its_limits() -> None:
    pairs = [(0.5, 0.5 + i / 100) for i in range(20)]  # residuals 0.00 .. 0.19
    assert conformal_radius(pairs) == pytest.approx(0.18)  # the 19th smallest of 20
    assert conformal_radius(pairs[:5]) == 1.0  # too few for a 90 % rank: the whole range
    assert conformal_interval(0.95, pairs) == (pytest.approx(0.77), 1.0)
    with pytest.raises(ValueError, match="at least 20"):
        conformal_interval(0.5, pairs[:19])
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        conformal_radius([(0.5, 1.5)])
