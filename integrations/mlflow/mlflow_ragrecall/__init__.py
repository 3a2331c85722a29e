"""MLflow integration of ragrecall: context recall scorers for ``mlflow.genai.evaluate`` that
read the trace's RETRIEVER spans, and metrics for ``mlflow.evaluate``."""

from ._feedback import as_feedback, rationale
from ._metric import make_metric
from ._scorers import (
    ChunkRecallScorer,
    ContextPrecisionScorer,
    ContextRecallScorer,
    Judge,
    QuestionRecallScorer,
    RecallPrecisionScorer,
    RecallScorer,
    ResponseRecallScorer,
    RetrievalRecallScorer,
    SufficiencyScorer,
    get_scorer,
)

__all__ = [
    "ChunkRecallScorer",
    "ContextPrecisionScorer",
    "ContextRecallScorer",
    "Judge",
    "QuestionRecallScorer",
    "RecallPrecisionScorer",
    "RecallScorer",
    "ResponseRecallScorer",
    "RetrievalRecallScorer",
    "SufficiencyScorer",
    "as_feedback",
    "get_scorer",
    "make_metric",
    "rationale",
]
