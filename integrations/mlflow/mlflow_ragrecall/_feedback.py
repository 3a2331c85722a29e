"""ragrecall results as MLflow ``Feedback``: the score as the value, the result in words as the
rationale (``ragrecall.adapters.explanation``: per claim, chunk, sub-question or item), the
per-claim verdicts also as fields in the metadata (``verdicts``: a JSON list of claim,
supported, chunk_ids, evidence, p_supported); an unscorable result is a Feedback with an
``AssessmentError`` whose code says what kind of failure it was."""

from __future__ import annotations

import json

from mlflow.entities import AssessmentError, AssessmentSource, AssessmentSourceType, Feedback
from mlflow.genai.scorers import FRAMEWORK_METADATA_KEY

from ragrecall import RecallResult
from ragrecall.adapters import claim_metadata, error_type, explanation

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
    if result.verdicts:  # MLflow's metadata holds text: the verdicts as one JSON list
        metadata["verdicts"] = json.dumps(claim_metadata(result), ensure_ascii=False)
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
            rationale=explanation(result),
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
    """The result in words: ``ragrecall.adapters.explanation``, the wording Phoenix and the
    traces' write-back share."""
    return explanation(result)
