"""ragrecall results as MLflow ``Feedback``: the score as the value, the per-claim verdicts
(or per-chunk, per-sub-question, per-item ones) as the rationale; an unscorable result is a
Feedback with an ``AssessmentError`` whose code says what kind of failure it was."""

from __future__ import annotations

from typing import Any

from mlflow.entities import AssessmentError, AssessmentSource, AssessmentSourceType, Feedback
from mlflow.genai.scorers import FRAMEWORK_METADATA_KEY

from ragrecall import RecallResult
from ragrecall.adapters import error_type

__all__ = ["FRAMEWORK", "as_feedback", "rationale", "unscorable_feedback"]

FRAMEWORK = "ragrecall"  # under MLflow's key, as its RAGAS and DeepEval scorers name theirs
# Numbers some results carry besides the score, kept in the metadata (as text: MLflow's type).
_NUMBERS = ("recall", "precision", "average_precision", "f1", "hit_rate", "mrr", "ndcg")


def as_feedback(name: str, result: RecallResult, span_id: str | None = None) -> Feedback:
    """``result`` as a Feedback named ``name``, on the retriever span ``span_id`` (also in the
    metadata as ``retriever_span_id``: ``mlflow.genai.evaluate`` moves every Feedback onto
    the trace's root span)."""
    if result.judge is not None:
        source = AssessmentSource(AssessmentSourceType.LLM_JUDGE, source_id=result.judge.model)
    else:
        source = AssessmentSource(AssessmentSourceType.CODE, source_id=f"ragrecall.{result.metric}")
    metadata = {FRAMEWORK_METADATA_KEY: FRAMEWORK, "metric": result.metric, "status": result.status}
    if span_id is not None:
        metadata["retriever_span_id"] = span_id
    if result.claims:
        metadata["claims"] = str(len(result.claims))
        metadata["missing"] = str(len(result.missing))
    if result.claim_set is not None:
        metadata["claim_set"] = result.claim_set
    for key in _NUMBERS:
        value = getattr(result, key, None)
        if isinstance(value, (int, float)):
            metadata[key] = str(value)
    if result.status == "unscorable":
        error = AssessmentError(
            error_code=error_type(result) or "_OTHER", error_message=result.reason
        )
        return Feedback(
            name=name,
            error=error,
            rationale=f"Unscorable: {result.reason}",
            source=source,
            metadata=metadata,
            span_id=span_id,
        )
    return Feedback(
        name=name,
        value=result.score,
        rationale=rationale(result),
        source=source,
        metadata=metadata,
        span_id=span_id,
    )


def unscorable_feedback(name: str, reason: str, code: str, span_id: str | None = None) -> Feedback:
    """A Feedback for input the scorer could not read: an error value, never an exception."""
    return Feedback(
        name=name,
        error=AssessmentError(error_code=code, error_message=reason),
        rationale=f"Unscorable: {reason}",
        source=AssessmentSource(AssessmentSourceType.CODE, source_id=FRAMEWORK),
        metadata={FRAMEWORK_METADATA_KEY: FRAMEWORK, "status": "unscorable"},
        span_id=span_id,
    )


def rationale(result: RecallResult) -> str:
    """The score in words, then one line per claim (supported: by which chunk, with what
    quote; not: why), or per chunk, sub-question or relevant item for the metrics that have
    those instead."""
    lines = []
    if result.claims:
        supported = len(result.claims) - len(result.missing)
        lines.append(f"{supported} of {len(result.claims)} claims supported.")
    else:
        lines.append(f"Score {result.score:.2f}.")
    if result.reason:
        lines.append(f"Note: {result.reason}")
    for v in result.verdicts:
        if v.attributed:
            quote = f': "{v.evidence}"' if v.evidence else ""
            lines.append(f"- supported: {v.claim} (chunk {', '.join(v.chunk_ids)}{quote})")
        else:
            lines.append(f"- missing: {v.claim} ({v.reason or 'no chunk supports it'})")
    for item in _details(result, "sub_questions"):
        found = "answered" if item.answerable else "not answered"
        where = f" by chunk {', '.join(item.chunk_ids)}" if item.chunk_ids else ""
        lines.append(f"- {found}{where}: {item.question}" + _why(item))
    for item in _details(result, "chunks"):
        verdict = "relevant" if item.relevant else "not relevant"
        if getattr(item, "reflected", None) is not None:
            verdict += ", reflected" if item.reflected else ", not reflected"
        lines.append(f"- chunk {item.chunk_id}: {verdict}" + _why(item, verdict))
    for item in _details(result, "items"):
        name = item.id or item.text or "?"
        found = f"retrieved at rank {item.rank}" if item.retrieved else "not retrieved"
        lines.append(f"- relevant {name}: {found}")
    return "\n".join(lines)


def _details(result: RecallResult, field: str) -> list[Any]:
    value = getattr(result, field, None)
    return list(value) if isinstance(value, list) else []


def _why(item: Any, verdict: str = "") -> str:
    """The item's reason, unless it only repeats the verdict."""
    reason = getattr(item, "reason", "")
    return f" ({reason})" if reason and reason != verdict else ""
