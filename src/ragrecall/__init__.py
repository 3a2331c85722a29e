"""ragrecall: context recall for retrieval-augmented generation.

Split a reference answer into claims, ask a judge which retrieved chunk supports each claim
(with a verified quote), and score supported / total.
"""

from typing import TYPE_CHECKING, Any

from ._batch.evaluate import evaluate_batch
from ._calibration import (
    Agreement,
    CalibrationProfile,
    Label,
    calibrate,
    read_labels,
)
from ._data import load_samples
from ._errors import (
    CalibrationError,
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
from ._logger import LoggerStats, RecallLogger
from ._metrics.attribution import Decision, attribution_chain
from ._metrics.base import Metric
from ._metrics.chunk_recall import ChunkRecall
from ._metrics.claims import ClaimCache, decomposition_chain
from ._metrics.context_recall import ContextRecall, default_claim_cache
from ._metrics.evidence import split_sentences, word_overlap
from ._metrics.injection import instructs_judge
from ._metrics.precision import ContextPrecision
from ._metrics.question_recall import QuestionRecall
from ._metrics.recall_precision import RecallPrecision
from ._metrics.response_recall import ResponseRecall
from ._metrics.retrieval_recall import RetrievalRecall
from ._results import (
    ChunkRecallResult,
    ChunkRelevance,
    ChunkVerdict,
    PrecisionResult,
    QuestionRecallResult,
    RecallPrecisionResult,
    RelevantItem,
    RetrievalResult,
    SubQuestionVerdict,
)
from ._schemas import (
    Chunk,
    ClaimSet,
    ClaimVerdict,
    JudgeInfo,
    RecallResult,
    Sample,
    Usage,
    claim_set_hash,
)
from ._sinks import CallableSink, JsonlSink, LangSmithSink, RecallRecord, Sink, SQLiteSink
from ._traces import NotAssessed, TracedSamples, load_traces

__version__ = "0.1.0"

# The embedded judge's machinery (llama.cpp bindings, the model store) loads on first use.
_LOCAL = ("DEFAULT_MODEL", "LocalJudge", "ModelInfo", "resolve_model")


def __getattr__(name: str) -> Any:
    if name in _LOCAL:
        from . import _local

        value = getattr(_local, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'ragrecall' has no attribute {name!r}")


if TYPE_CHECKING:
    from ._local import DEFAULT_MODEL, LocalJudge, ModelInfo, resolve_model

__all__ = [
    "DEFAULT_MODEL",
    "Agreement",
    "CalibrationError",
    "CalibrationProfile",
    "CallableSink",
    "Chunk",
    "ChunkRecall",
    "ChunkRecallResult",
    "ChunkRelevance",
    "ChunkVerdict",
    "ClaimCache",
    "ClaimSet",
    "ClaimVerdict",
    "ContextPrecision",
    "ContextRecall",
    "Decision",
    "EvaluationReport",
    "JsonlSink",
    "JudgeError",
    "JudgeInfo",
    "JudgeModelError",
    "JudgeRateLimitError",
    "Label",
    "LangSmithSink",
    "LocalJudge",
    "LoggerStats",
    "Metric",
    "ModelInfo",
    "ModelIntegrityError",
    "NotAssessed",
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
    "TracedSamples",
    "Usage",
    "__version__",
    "aevaluate",
    "astream",
    "attribution_chain",
    "calibrate",
    "claim_set_hash",
    "decomposition_chain",
    "default_claim_cache",
    "evaluate",
    "evaluate_batch",
    "instructs_judge",
    "load_samples",
    "load_traces",
    "read_labels",
    "resolve_judge",
    "resolve_model",
    "split_sentences",
    "structured",
    "word_overlap",
]
