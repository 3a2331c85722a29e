"""ragrecall for LlamaIndex: recall evaluators, query-engine evaluation, retrieval metrics,
automatic capture from instrumentation events, and LlamaIndex LLMs as judges."""

import warnings as _warnings
from typing import Any as _Any

from ._capture import RecallCapture, ReferenceLookup
from ._evaluators import EVALUATORS as _EVALUATORS
from ._evaluators import (
    ChunkRecallEvaluator,
    ContextPrecisionEvaluator,
    ContextRecallEvaluator,
    QuestionRecallEvaluator,
    RecallEvaluationResult,
    RecallEvaluator,
    RecallPrecisionEvaluator,
    ResponseRecallEvaluator,
    SufficiencyEvaluator,
)
from ._judge import LlamaIndexJudge, as_judge
from ._nodes import chunks_from_nodes
from ._query_engine import aevaluate_query_engine, evaluate_query_engine
from ._retrieval import Measure, RetrievalRecallMetric

__all__ = [
    "ChunkRecallEvaluator",
    "ContextPrecisionEvaluator",
    "ContextRecallEvaluator",
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
    "SufficiencyEvaluator",
    "aevaluate_query_engine",
    "as_judge",
    "chunks_from_nodes",
    "evaluate_query_engine",
]


def __getattr__(name: str) -> _Any:
    if name == "JudgeSpec":  # one public judge type now: ragrecall.judges.JudgeLike
        _warnings.warn(
            "JudgeSpec is deprecated and will be removed in 0.3; use ragrecall.judges.JudgeLike "
            "(or a LlamaIndex LLM, which every evaluator also takes)",
            DeprecationWarning,
            stacklevel=2,
        )
        from ._judge import EvaluatorJudge

        return EvaluatorJudge
    if name in _EVALUATORS:  # the evaluator of a metric this package does not name
        return _EVALUATORS[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
