"""ragrecall: context recall for retrieval-augmented generation.

Split a reference answer into claims, ask a judge which retrieved chunk supports each claim
(with a verified quote), and score supported / total.
"""

from ._data import load_samples
from ._errors import (
    JudgeError,
    JudgeModelError,
    JudgeRateLimitError,
    ModelIntegrityError,
    RagrecallError,
    SampleError,
)
from ._evaluate import EvaluationReport, ScoredSample, aevaluate, astream, evaluate
from ._judge.drive import Policy
from ._judge.resolve import resolve_judge
from ._judge.structured import structured
from ._local import DEFAULT_MODEL, LocalJudge, ModelInfo, resolve_model
from ._logger import LoggerStats, RecallLogger
from ._metrics.attribution import attribution_chain
from ._metrics.base import Metric
from ._metrics.chunk_recall import ChunkRecall
from ._metrics.claims import ClaimCache, decomposition_chain
from ._metrics.context_recall import ContextRecall, default_claim_cache
from ._metrics.precision import ContextPrecision, RecallPrecision
from ._metrics.question_recall import QuestionRecall
from ._metrics.response_recall import ResponseRecall
from ._metrics.retrieval_recall import RetrievalRecall
from ._schemas import (
    Chunk,
    ChunkRecallResult,
    ChunkRelevance,
    ChunkVerdict,
    ClaimVerdict,
    JudgeInfo,
    PrecisionResult,
    QuestionRecallResult,
    RecallPrecisionResult,
    RecallResult,
    RelevantItem,
    RetrievalResult,
    Sample,
    SubQuestionVerdict,
    Usage,
)
from ._sinks import CallableSink, JsonlSink, LangSmithSink, RecallRecord, Sink, SQLiteSink

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_MODEL",
    "CallableSink",
    "Chunk",
    "ChunkRecall",
    "ChunkRecallResult",
    "ChunkRelevance",
    "ChunkVerdict",
    "ClaimCache",
    "ClaimVerdict",
    "ContextPrecision",
    "ContextRecall",
    "EvaluationReport",
    "JsonlSink",
    "JudgeError",
    "JudgeInfo",
    "JudgeModelError",
    "JudgeRateLimitError",
    "LangSmithSink",
    "LocalJudge",
    "LoggerStats",
    "Metric",
    "ModelInfo",
    "ModelIntegrityError",
    "Policy",
    "PrecisionResult",
    "QuestionRecall",
    "QuestionRecallResult",
    "RagrecallError",
    "RecallLogger",
    "RecallPrecision",
    "RecallPrecisionResult",
    "RecallRecord",
    "RecallResult",
    "RelevantItem",
    "ResponseRecall",
    "RetrievalRecall",
    "RetrievalResult",
    "SQLiteSink",
    "Sample",
    "SampleError",
    "ScoredSample",
    "Sink",
    "SubQuestionVerdict",
    "Usage",
    "__version__",
    "aevaluate",
    "astream",
    "attribution_chain",
    "decomposition_chain",
    "default_claim_cache",
    "evaluate",
    "load_samples",
    "resolve_judge",
    "resolve_model",
    "structured",
]
