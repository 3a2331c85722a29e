"""Gate recall in your own test suite.

    from ragrecall.testing import assert_recall

    def test_retriever_finds_the_facts():
        sample = {"user_input": q, "reference": gold, "retrieved_contexts": retrieve(q)}
        assert_recall(sample, min_score=0.8)

A failure lists the score, the missing claims with the judge's reason for each, and the
supported ones with their chunk and evidence; an unscorable sample fails with its reason.
With the pytest plugin (installed with ragrecall), the ``assert_recall`` fixture does the same
with the session's judge: ``--recall-judge`` / ``$RAGRECALL_JUDGE`` (``local`` or
``provider:model``), or your own ``recall_judge`` fixture returning a chat model.

To test code around a judge without a model, ``ScriptedJudge(reply=...)`` is a chat model
that answers what ``reply(messages)`` returns; its default, ``keyword_reply``, supports a
claim when all its words occur in a passage.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._core.schemas import RecallResult, Sample
from ._judge.resolve import JudgeLike
from ._judge.scripted import Reply, ScriptedJudge, TextOnlyJudge, keyword_reply, passages
from ._metrics.base import Metric
from ._metrics.registry import build_metrics

__all__ = [
    "RecallAssertionError",
    "Reply",
    "ScriptedJudge",
    "TextOnlyJudge",
    "aassert_recall",
    "assert_recall",
    "keyword_reply",
    "passages",
    "recall_metric",
]


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
