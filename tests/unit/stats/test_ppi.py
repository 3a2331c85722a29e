"""Prediction-powered inference by simulation: coverage, width, lambda, fallback, validation.

Each simulated dataset is fixed (seeded); each of 1,000 draws labels a fresh simple random
sample of its answers, as the design assumes, and the target is the people's mean over the
whole dataset.
"""

from __future__ import annotations

import math
import random
import statistics

import pytest

from ragrecall.stats import (
    PPI_MIN_LABELS,
    PPIResult,
    ppi_difference,
    ppi_mean,
    t_quantile,
)

DRAWS = 1_000
SIZE, LABELS = 600, 40


def _verdicts(rng: random.Random, truth: list[bool], generous: float, sharp: float) -> float:
    """A judge's recall of one answer: each claim called supported with probability
    sigmoid(generous + sharp * truth + u), u ~ N(0, 0.5) shared by the answer's claims."""
    shift = generous + rng.gauss(0, 0.5)
    calls = [rng.random() < 1 / (1 + math.exp(-(shift + sharp * t))) for t in truth]
    return sum(calls) / len(calls)


def _dataset(
    seed: int, generous: float, sharp: float, size: int = SIZE
) -> tuple[list[float], list[float]]:
    """People's and a judge's recall of ``size`` answers of 3 to 10 claims each."""
    rng = random.Random(seed)
    human, judge = [], []
    for _ in range(size):
        share = rng.betavariate(2, 1.2)
        truth = [rng.random() < share for _ in range(rng.randint(3, 10))]
        human.append(sum(truth) / len(truth))
        judge.append(_verdicts(rng, truth, generous, sharp))
    return human, judge


def _draws(human: list[float], judge: list[float], seed: int = 0) -> list[PPIResult]:
    rng = random.Random(seed)
    out = []
    for _ in range(DRAWS):
        idx = rng.sample(range(len(human)), LABELS)
        out.append(ppi_mean(judge, [judge[i] for i in idx], [human[i] for i in idx]))
    return out


def _coverage(results: list[PPIResult], target: float) -> float:
    return sum(r.low <= target <= r.high for r in results) / len(results)


def _raw_interval(judge: list[float], confidence: float = 0.9) -> tuple[float, float]:
    """The judge's mean with the usual t interval, no labels: what a raw report gives."""
    half = t_quantile((1 + confidence) / 2, len(judge) - 1) * statistics.stdev(judge)
    centre = statistics.fmean(judge)
    return centre - half / math.sqrt(len(judge)), centre + half / math.sqrt(len(judge))


def _width_ratio(results: list[PPIResult]) -> float:
    return statistics.fmean(
        (r.high - r.low) / (r.labels_only[1] - r.labels_only[0]) for r in results
    )


@pytest.mark.parametrize(
    ("p", "df", "table"),
    [
        (0.95, 1, 6.314), (0.975, 1, 12.706), (0.995, 2, 9.925), (0.95, 3, 2.353),
        (0.975, 4, 2.776), (0.95, 5, 2.015), (0.975, 5, 2.571), (0.995, 5, 4.032),
        (0.95, 8, 1.860), (0.95, 10, 1.812), (0.975, 10, 2.228), (0.95, 38, 1.686),
        (0.975, 30, 2.042), (0.995, 120, 2.617), (0.95, 1000, 1.646), (0.9995, 3, 12.924),
    ],
)  # fmt: skip
def test_t_quantile_matches_table_values(p: float, df: int, table: float) -> None:
    assert t_quantile(p, df) == pytest.approx(table, abs=1e-3)
    assert t_quantile(1 - p, df) == pytest.approx(-t_quantile(p, df), abs=1e-12)


def test_t_quantile_tends_to_the_normal_and_rejects_bad_input() -> None:
    assert t_quantile(0.5, 7) == pytest.approx(0.0, abs=1e-12)
    normal = statistics.NormalDist().inv_cdf(0.95)
    assert t_quantile(0.95, 10**6) == pytest.approx(normal, abs=1e-5)
    for p, df in ((0.0, 5), (1.0, 5), (0.9, 0), (0.9, 2.5)):
        with pytest.raises(ValueError):
            t_quantile(p, df)  # type: ignore[arg-type]


@pytest.mark.parametrize(("case", "generous", "seed"), [("up", -0.5, 1), ("down", -2.5, 2)])
def test_ppi_mean_covers_where_the_biased_judge_does_not(
    case: str, generous: float, seed: int
) -> None:
    human, judge = _dataset(seed, generous, sharp=4.0)
    target = statistics.fmean(human)
    bias = statistics.fmean(judge) - target
    assert bias > 0.04 if case == "up" else bias < -0.04
    results = _draws(human, judge)
    assert 0.87 <= _coverage(results, target) <= 0.93
    low, high = _raw_interval(judge)
    assert not low <= target <= high
    assert all(r.method == "ppi" and r.labels == LABELS and r.total == SIZE for r in results)
    assert statistics.fmean(r.judge_bias for r in results) == pytest.approx(bias, abs=0.01)
    corrected = statistics.fmean(abs(r.estimate - target) for r in results)
    assert corrected < abs(bias) / 2


def test_ppi_difference_covers_when_the_arms_are_biased_differently() -> None:
    rng = random.Random(3)
    judge_pairs, human_pairs = [], []
    for _ in range(SIZE):
        share = rng.betavariate(2, 1.2)
        claims = rng.randint(3, 10)
        truth_a = [rng.random() < share for _ in range(claims)]
        truth_b = [rng.random() < 0.85 * share for _ in range(claims)]
        human_pairs.append((sum(truth_a) / claims, sum(truth_b) / claims))
        # generous on A's answers, strict on B's
        judge_pairs.append((_verdicts(rng, truth_a, -0.5, 4.0), _verdicts(rng, truth_b, -2.5, 4.0)))
    target = statistics.fmean(a - b for a, b in human_pairs)
    raw = [a - b for a, b in judge_pairs]
    assert statistics.fmean(raw) - target > 0.1
    draw = random.Random(0)
    results = []
    for _ in range(DRAWS):
        idx = draw.sample(range(SIZE), LABELS)
        results.append(
            ppi_difference(
                judge_pairs, [judge_pairs[i] for i in idx], [human_pairs[i] for i in idx]
            )
        )
    assert 0.87 <= _coverage(results, target) <= 0.93
    low, high = _raw_interval(raw)
    assert not low <= target <= high
    assert statistics.fmean(r.judge_bias for r in results) > 0.1


def test_ppi_is_narrower_than_labels_only_when_the_judge_agrees() -> None:
    human, judge = _dataset(4, -1.0, sharp=4.0)
    assert 0.75 <= statistics.correlation(human, judge) <= 0.85
    results = _draws(human, judge)
    assert _width_ratio(results) <= 0.75
    assert statistics.fmean(r.lambda_ for r in results) > 0.8


def test_a_useless_judge_gets_lambda_near_zero_and_the_labels_only_width() -> None:
    human, _ = _dataset(5, 0.0, sharp=0.0)
    rng = random.Random(6)
    judge = [rng.random() for _ in human]
    results = _draws(human, judge)
    assert statistics.fmean(r.lambda_ for r in results) < 0.15
    assert 0.95 <= _width_ratio(results) <= 1.1
    assert 0.87 <= _coverage(results, statistics.fmean(human)) <= 0.93


def test_the_estimate_is_the_regression_estimator() -> None:
    human, judge = _dataset(7, -1.0, sharp=4.0, size=50)
    idx = random.Random(8).sample(range(50), 20)
    x, y = [judge[i] for i in idx], [human[i] for i in idx]
    result = ppi_mean(judge, x, y, confidence=0.95)
    slope = statistics.linear_regression(x, y).slope
    assert 0 < slope < 1
    assert result.lambda_ == pytest.approx(slope, abs=1e-12)
    expected = statistics.fmean(y) - slope * (statistics.fmean(x) - statistics.fmean(judge))
    assert result.estimate == pytest.approx(expected, abs=1e-12)
    residual = [b - slope * a for a, b in zip(x, y, strict=True)]
    variance = statistics.variance(residual) * 19 / 18
    assert result.std_error == pytest.approx(math.sqrt((1 - 20 / 50) * variance / 20), abs=1e-12)
    half = t_quantile(0.975, 18) * result.std_error
    assert (result.low, result.high) == pytest.approx((expected - half, expected + half))
    assert result.rho == pytest.approx(statistics.correlation(x, y), abs=1e-12)
    assert result.judge_mean == pytest.approx(statistics.fmean(judge), abs=1e-12)


def test_below_the_minimum_it_returns_the_labels_only_interval_and_says_so() -> None:
    human, judge = _dataset(9, -0.5, sharp=4.0, size=100)
    few = ppi_mean(judge[:100], judge[: PPI_MIN_LABELS - 1], human[: PPI_MIN_LABELS - 1])
    assert few.method == f"labels-only: fewer than {PPI_MIN_LABELS} labelled answers"
    assert (few.low, few.high) == few.labels_only
    assert few.estimate == pytest.approx(statistics.fmean(human[: PPI_MIN_LABELS - 1]))
    assert few.lambda_ == 0.0
    enough = ppi_mean(judge, judge[:PPI_MIN_LABELS], human[:PPI_MIN_LABELS])
    assert enough.method == "ppi"
    one = ppi_mean(judge, judge[:1], human[:1])
    assert (one.low, one.high) == (0.0, 1.0) and one.rho is None


def test_every_answer_labelled_gives_the_peoples_mean_exactly() -> None:
    human, judge = _dataset(10, -0.5, sharp=4.0, size=30)
    result = ppi_mean(judge, judge, human)
    assert result.estimate == result.low == result.high == pytest.approx(statistics.fmean(human))


@pytest.mark.parametrize(
    ("judge_all", "judge_labeled", "human_labeled", "message"),
    [
        ([0.5] * 20, [0.5] * 12, [0.5] * 11, "equal lengths"),
        ([0.5] * 20, [], [], "needs labelled answers"),
        ([0.5] * 10, [0.5] * 12, [0.5] * 12, "must score every answer"),
        ([0.5] * 20, [0.5] * 12, [0.5] * 11 + [1.5], r"in \[0, 1\]"),
        ([0.5] * 19 + [math.nan], [0.5] * 12, [0.5] * 12, r"in \[0, 1\]"),
        ([0.5] * 20, [0.5] * 11 + [-math.inf], [0.5] * 12, r"in \[0, 1\]"),
    ],
)
def test_bad_input_is_a_clear_value_error(
    judge_all: list[float], judge_labeled: list[float], human_labeled: list[float], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        ppi_mean(judge_all, judge_labeled, human_labeled)


def test_bad_input_to_the_difference_and_the_confidence() -> None:
    pairs = [(0.5, 0.5)] * 12
    with pytest.raises(ValueError, match="needs labelled answers"):
        ppi_difference(pairs, [], [])
    with pytest.raises(ValueError, match=r"\(A, B\) pairs"):
        ppi_difference(pairs, [(0.5,)] * 12, pairs)  # type: ignore[list-item]
    with pytest.raises(ValueError, match="confidence"):
        ppi_mean([0.5] * 12, [0.5] * 12, [0.5] * 12, confidence=1.0)
