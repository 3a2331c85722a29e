"""Agreement of a judge's verdicts with people's labels: balanced accuracy, Cohen's kappa, and
the plain expected calibration error of a probability (the debiased one: ``calibration``)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["balanced_accuracy", "cohen_kappa", "expected_calibration_error"]


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
