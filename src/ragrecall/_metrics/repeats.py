"""Repeats: a sample judged several times, its runs combined into one result of the same type."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import TypeVar

from .._core.schemas import RecallResult, Usage

__all__ = ["combine_runs"]

R = TypeVar("R", bound=RecallResult)


def combine_runs(results: Sequence[R]) -> R:
    """One result for several runs of one metric on one sample: ``score`` is the mean of the
    scored runs and ``runs`` holds each run's score (None where unscorable); every other field
    (claims, verdicts, chunks, ...) comes from the first scored run; usage and time are summed."""
    if len(results) == 1:
        return results[0]
    runs = [r.score for r in results]
    scored = [s for s in runs if s is not None]
    first = next((r for r in results if r.score is not None), results[0])
    return first.model_copy(
        update={
            "score": statistics.fmean(scored) if scored else None,
            "status": "scored" if scored else "unscorable",
            "usage": sum((r.usage for r in results), Usage()),
            "elapsed_s": sum(r.elapsed_s for r in results),
            "runs": runs,
        }
    )
