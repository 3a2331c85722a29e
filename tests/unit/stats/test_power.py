"""Effect size, the sign-flip test's floor, and the minimum detectable difference."""

from __future__ import annotations

import math
import statistics

import pytest

from ragrecall.stats import (
    minimum_detectable_difference,
    paired_effect_size,
    sign_flip_test,
    smallest_p_value,
)

Z_975 = statistics.NormalDist().inv_cdf(0.975)  # 1.959964
Z_80 = statistics.NormalDist().inv_cdf(0.8)  # 0.841621


def test_effect_size_hand_computed() -> None:
    # mean 0.5; squared deviations 0, 0, 0.25, 0.25 -> variance 0.5 / 3 = 1/6
    diffs = [0.5, 0.5, 1.0, 0.0]
    assert paired_effect_size(diffs) == pytest.approx(0.5 / math.sqrt(1 / 6), abs=1e-12)
    assert paired_effect_size(diffs) == pytest.approx(math.sqrt(1.5), abs=1e-12)


def test_effect_size_sign_follows_the_mean() -> None:
    diffs = [0.5, 0.5, 1.0, 0.0]
    positive = paired_effect_size(diffs)
    negative = paired_effect_size([-d for d in diffs])
    assert positive is not None and negative is not None
    assert positive > 0 and negative == pytest.approx(-positive, abs=1e-12)


def test_effect_size_edge_cases() -> None:
    assert paired_effect_size([]) is None
    assert paired_effect_size([0.3]) is None
    assert paired_effect_size([0.0, 0.0, 0.0]) == 0.0
    assert paired_effect_size([0.1, 0.1, 0.1]) == math.inf  # float mean of these is not 0.1
    assert paired_effect_size([-0.2] * 5) == -math.inf


def test_smallest_p_value() -> None:
    assert smallest_p_value(0) == 1.0
    assert smallest_p_value(1) == 1.0
    assert smallest_p_value(4) == 0.125
    assert smallest_p_value(6) == 2 / 64
    with pytest.raises(ValueError):
        smallest_p_value(-1)


def test_smallest_p_value_is_what_the_exact_test_gives_when_all_agree() -> None:
    for n in range(1, 9):
        assert sign_flip_test([0.25] * n) == smallest_p_value(n)


def test_mdd_is_inf_when_the_exact_test_cannot_reach_alpha() -> None:
    diffs = [0.5, 0.5, 1.0, 0.0]  # 3 non-zero: floor 0.25
    assert minimum_detectable_difference(diffs) == math.inf
    assert minimum_detectable_difference([0.5, 0.5, 1.0, 0.25]) == math.inf  # floor 0.125
    assert minimum_detectable_difference([0.2, -0.1, 0.3, 0.4, 0.1]) == math.inf  # 0.0625
    assert minimum_detectable_difference([0.0] * 100) == math.inf  # no non-zero difference
    assert math.isfinite(minimum_detectable_difference([0.2, -0.1, 0.3, 0.4, 0.1, 0.5]) or 0)


def test_mdd_hand_computed_where_alpha_is_reachable() -> None:
    diffs = [0.5, 0.5, 1.0, 0.0]  # floor 0.25 <= alpha 0.3; sd sqrt(1/6), n 4
    z = statistics.NormalDist().inv_cdf
    expected = (z(0.85) + z(0.8)) * math.sqrt(1 / 6) / 2
    assert minimum_detectable_difference(diffs, alpha=0.3) == pytest.approx(expected, abs=1e-12)


def test_mdd_at_n30_with_sd_03() -> None:
    half = 0.3 * math.sqrt(29 / 30)  # 15 at 0.1 + half, 15 at 0.1 - half: sample sd 0.3
    diffs = [0.1 + half] * 15 + [0.1 - half] * 15
    assert statistics.stdev(diffs) == pytest.approx(0.3, abs=1e-12)
    expected = (1.959964 + 0.841621) * 0.3 / math.sqrt(30)
    assert minimum_detectable_difference(diffs) == pytest.approx(expected, abs=1e-4)
    assert minimum_detectable_difference(diffs) == pytest.approx(
        (Z_975 + Z_80) * 0.3 / math.sqrt(30), abs=1e-12
    )


def test_mdd_shrinks_like_one_over_sqrt_n() -> None:
    base = [0.5, 0.25, -0.25, 1.0, 0.75]  # none zero
    small, large = base * 4, base * 16  # n 20 and n 80
    mdd_small = minimum_detectable_difference(small)
    mdd_large = minimum_detectable_difference(large)
    assert mdd_small is not None and mdd_large is not None
    # Per unit of sd the ratio is exactly sqrt(80 / 20) = 2 ...
    per_sd = (mdd_small / statistics.stdev(small)) / (mdd_large / statistics.stdev(large))
    assert per_sd == pytest.approx(2.0, abs=1e-9)
    # ... and the sample sd (n - 1) of the repeated diffs adds sqrt((79/80) / (19/20)).
    assert mdd_small / mdd_large == pytest.approx(math.sqrt(79 / 19), abs=1e-9)


def test_mdd_grows_with_power_and_stricter_alpha() -> None:
    diffs = [0.5, 0.25, -0.25, 1.0, 0.75] * 6
    default = minimum_detectable_difference(diffs)
    assert default is not None
    assert (minimum_detectable_difference(diffs, power=0.9) or 0) > default
    assert (minimum_detectable_difference(diffs, alpha=0.01) or 0) > default


def test_mdd_edge_cases() -> None:
    assert minimum_detectable_difference([]) is None
    assert minimum_detectable_difference([0.4]) is None
    assert minimum_detectable_difference([0.25] * 6) == 0.0  # sd 0, floor 2/64 <= 0.05
    assert minimum_detectable_difference([0.1] * 10) == 0.0  # float mean off by an ulp
    assert minimum_detectable_difference([0.25] * 5) == math.inf  # floor 2/32 > 0.05
    for bad in ({"alpha": 0.0}, {"alpha": 1.0}, {"power": 0.0}, {"power": 1.5}):
        with pytest.raises(ValueError):
            minimum_detectable_difference([0.1, 0.2], **bad)
