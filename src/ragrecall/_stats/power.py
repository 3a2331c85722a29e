"""Reading a non-significant paired comparison: the paired effect size (Cohen's d_z), the
smallest p-value the exact sign-flip test can reach, and the minimum detectable mean
difference (normal approximation)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from .tests import mean

__all__ = ["minimum_detectable_difference", "paired_effect_size", "smallest_p_value"]


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
