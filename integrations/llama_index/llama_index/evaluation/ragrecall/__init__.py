"""ragrecall for LlamaIndex: recall evaluators, query-engine evaluation, retrieval metrics,
automatic capture from instrumentation events, and LlamaIndex LLMs as judges."""

from ._capture import RecallCapture, ReferenceLookup
from ._evaluators import (
    ChunkRecallEvaluator,
    ContextPrecisionEvaluator,
    ContextRecallEvaluator,
    QuestionRecallEvaluator,
    RecallEvaluationResult,
    RecallEvaluator,
    RecallPrecisionEvaluator,
    ResponseRecallEvaluator,
)
from ._judge import JudgeSpec, LlamaIndexJudge, as_judge
from ._nodes import chunks_from_nodes
from ._query_engine import aevaluate_query_engine, evaluate_query_engine
from ._retrieval import Measure, RetrievalRecallMetric

__all__ = [
    "ChunkRecallEvaluator",
    "ContextPrecisionEvaluator",
    "ContextRecallEvaluator",
    "JudgeSpec",
    "LlamaIndexJudge",
    "Measure",
    "QuestionRecallEvaluator",
    "RecallCapture",
    "RecallEvaluationResult",
    "RecallEvaluator",
    "RecallPrecisionEvaluator",
    "ReferenceLookup",
    "ResponseRecallEvaluator",
    "RetrievalRecallMetric",
    "aevaluate_query_engine",
    "as_judge",
    "chunks_from_nodes",
    "evaluate_query_engine",
]
