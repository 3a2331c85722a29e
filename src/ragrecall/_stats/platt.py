"""Platt scaling of a probability: ``sigmoid(a * logit(p) + b)``, fitted by damped Newton
steps on Platt's smoothed targets."""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["logit", "platt", "sigmoid"]

_EPS = 1e-6
_RIDGE = 1e-2


def logit(p: float) -> float:
    """log(p / (1 - p)), with ``p`` kept within 1e-6 of 0 and 1."""
    p = min(max(p, _EPS), 1 - _EPS)
    return math.log(p / (1 - p))


def sigmoid(z: float) -> float:
    return 1 / (1 + math.exp(-z)) if z >= 0 else math.exp(z) / (1 + math.exp(z))


def platt(p: Sequence[float], true: Sequence[bool]) -> tuple[float, float]:
    """Platt's fit of ``sigmoid(a * logit(p) + b)`` (his smoothed targets), by damped Newton
    steps, with a small ridge on the slope's distance from 1. The slope is never negative: where
    the best fit would reverse the judge's order, the slope is 0 and every verdict gets the base
    rate (P(supported) carries no information about these labels)."""
    positives = sum(true)
    negatives = len(true) - positives
    hi, lo = (positives + 1) / (positives + 2), 1 / (negatives + 2)
    xs = [logit(v) for v in p]
    ys = [hi if t else lo for t in true]

    def loss(a: float, b: float) -> float:
        total = _RIDGE * (a - 1) ** 2 / 2
        for x, y in zip(xs, ys, strict=True):
            z = a * x + b
            # log(1 + e^z) - y z, computed stably
            total += max(z, 0) + math.log1p(math.exp(-abs(z))) - y * z
        return total

    a, b = 1.0, 0.0
    current = loss(a, b)
    for _ in range(100):
        ga, gb = _RIDGE * (a - 1), 0.0
        haa, hab, hbb = _RIDGE, 0.0, 1e-9
        for x, y in zip(xs, ys, strict=True):
            q = sigmoid(a * x + b)
            ga += (q - y) * x
            gb += q - y
            w = q * (1 - q)
            haa += w * x * x
            hab += w * x
            hbb += w
        det = haa * hbb - hab * hab
        if det <= 0:
            break
        da = (hbb * ga - hab * gb) / det
        db = (haa * gb - hab * ga) / det
        step = 1.0
        while step > 1e-6 and loss(a - step * da, b - step * db) > current:
            step /= 2
        a, b = a - step * da, b - step * db
        previous, current = current, loss(a, b)
        if previous - current < 1e-12:
            break
    if a < 0:  # never reverse the judge's order: P(supported) then says nothing (the base rate)
        base = sum(ys) / len(ys)
        return 0.0, math.log(base / (1 - base))
    return a, b
