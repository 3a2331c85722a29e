"""``assert_recall``: score a sample and fail with the missing claims, for a test suite
(``ragrecall.testing`` and the pytest plugin's fixture)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._core.schemas import RecallResult, Sample
from .._judge.resolve import JudgeLike
from .base import Metric
from .registry import build_metrics

__all__ = ["RecallAssertionError", "aassert_recall", "assert_recall", "check", "recall_metric"]


class RecallAssertionError(AssertionError):
    """Recall below the minimum, or unscorable; ``result`` holds the whole RecallResult."""

    def __init__(self, message: str, result: RecallResult):
        super().__init__(message)
        self.result = result


def recall_metric(
    metric: Metric[RecallResult] | str | None = None, judge: JudgeLike = None
) -> Metric[RecallResult]:
    """A metric object: ``metric`` itself, or built by name (default ``context_recall``)."""
    if isinstance(metric, Metric):
        if judge is not None:
            raise ValueError("pass either a metric object or a judge, not both")
        return metric
    return build_metrics([metric or "context_recall"], judge)[0]


def assert_recall(
    sample: Sample | Mapping[str, Any],
    min_score: float = 1.0,
    *,
    judge: JudgeLike = None,
    metric: Metric[RecallResult] | str | None = None,
) -> RecallResult:
    """Score ``sample`` and raise RecallAssertionError when the score is below ``min_score``
    (default 1.0: every claim supported) or the sample is unscorable; return the result.

    ``metric``: a Metric object (configured as you like) or a metric name; ``judge``: a chat
    model, ``"provider:model"`` or None for the embedded judge (only with a metric name).
    """
    m = recall_metric(metric, judge)
    result = m.score(sample)
    check(result, min_score, m.name, sample)
    return result


async def aassert_recall(
    sample: Sample | Mapping[str, Any],
    min_score: float = 1.0,
    *,
    judge: JudgeLike = None,
    metric: Metric[RecallResult] | str | None = None,
) -> RecallResult:
    """Async ``assert_recall``."""
    m = recall_metric(metric, judge)
    result = await m.ascore(sample)
    check(result, min_score, m.name, sample)
    return result


def check(
    result: RecallResult, min_score: float, name: str, sample: Sample | Mapping[str, Any]
) -> None:
    """Raise RecallAssertionError unless ``result`` scored at least ``min_score``."""
    question = (
        sample.user_input
        if isinstance(sample, Sample)
        else (sample.get("user_input") or sample.get("question"))
    )
    about = f" for {question!r}" if question else ""
    if result.score is None:
        raise RecallAssertionError(
            f"{name} could not score the sample{about}: {result.reason}", result
        )
    if result.score >= min_score:
        return
    lines = [f"{name} {result.score:.2f} < min_score {min_score:.2f}{about}"]
    if result.missing:
        lines.append("missing claims:")
        reasons = {v.claim: v.reason for v in result.verdicts}
        for claim in result.missing:
            why = reasons.get(claim)
            lines.append(f"  - {claim}" + (f"  ({why})" if why else ""))
    supported = [v for v in result.verdicts if v.attributed]
    if supported:
        lines.append("supported claims:")
        for v in supported:
            where = f" [chunk {', '.join(v.chunk_ids)}]" if v.chunk_ids else ""
            quote = f' "{v.evidence}"' if v.evidence else ""
            lines.append(f"  + {v.claim}{where}{quote}")
    if result.reason:
        lines.append(f"note: {result.reason}")
    raise RecallAssertionError("\n".join(lines), result)
