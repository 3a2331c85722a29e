"""ragrecall: context recall for retrieval-augmented generation.

Split a reference answer into claims, ask a judge which retrieved chunk supports each claim
(with a verified quote), and score supported / total.
"""

from importlib import import_module
from typing import TYPE_CHECKING

__version__ = "0.1.0"

# Each public name and the module it lives in, imported on first use: `import ragrecall` (and
# the pytest plugin, a submodule) costs almost nothing until a name is asked for.
_EXPORTS: dict[str, str] = {
    "evaluate_batch": "._deprecated",
    "Agreement": "._calibration",
    "CalibrationProfile": "._calibration",
    "Label": "._calibration",
    "calibrate": "._calibration",
    "read_labels": "._calibration",
    "load_samples": "._data",
    "CalibrationError": "._errors",
    "JudgeError": "._errors",
    "JudgeModelError": "._errors",
    "JudgeRateLimitError": "._errors",
    "ModelIntegrityError": "._errors",
    "RagrecallError": "._errors",
    "SampleError": "._errors",
    "EvaluationReport": "._evaluate",
    "ScoredSample": "._evaluate",
    "aevaluate": "._evaluate",
    "astream": "._evaluate",
    "evaluate": "._evaluate",
    "Policy": "._judge.drive",
    "resolve_judge": "._judge.resolve",
    "structured": "._judge.structured",
    "DEFAULT_MODEL": "._local",
    "LocalJudge": "._local",
    "ModelInfo": "._local",
    "resolve_model": "._local",
    "LoggerStats": "._logger",
    "RecallLogger": "._logger",
    "Decision": "._metrics.attribution",
    "attribution_chain": "._metrics.attribution",
    "Metric": "._metrics.base",
    "ChunkRecall": "._metrics.chunk_recall",
    "ClaimCache": "._metrics.claims",
    "decomposition_chain": "._metrics.claims",
    "ContextRecall": "._metrics.context_recall",
    "default_claim_cache": "._metrics.context_recall",
    "split_sentences": "._metrics.evidence",
    "word_overlap": "._metrics.evidence",
    "instructs_judge": "._metrics.injection",
    "ContextPrecision": "._metrics.precision",
    "QuestionRecall": "._metrics.question_recall",
    "RecallPrecision": "._metrics.recall_precision",
    "ResponseRecall": "._metrics.response_recall",
    "RetrievalRecall": "._metrics.retrieval_recall",
    "ChunkRecallResult": "._results",
    "ChunkRelevance": "._results",
    "ChunkVerdict": "._results",
    "PrecisionResult": "._results",
    "QuestionRecallResult": "._results",
    "RecallPrecisionResult": "._results",
    "RelevantItem": "._results",
    "RetrievalResult": "._results",
    "SubQuestionVerdict": "._results",
    "Chunk": "._schemas",
    "ClaimSet": "._schemas",
    "ClaimVerdict": "._schemas",
    "JudgeInfo": "._schemas",
    "RecallResult": "._schemas",
    "Sample": "._schemas",
    "Usage": "._schemas",
    "claim_set_hash": "._schemas",
    "CallableSink": "._sinks",
    "JsonlSink": "._sinks",
    "LangSmithSink": "._sinks",
    "RecallRecord": "._sinks",
    "SQLiteSink": "._sinks",
    "Sink": "._sinks",
    "NotAssessed": "._traces",
    "TracedSamples": "._traces",
    "load_traces": "._traces",
}


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ragrecall' has no attribute {name!r}")
    value = getattr(import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return list(__all__)


if TYPE_CHECKING:
    from ._calibration import Agreement, CalibrationProfile, Label, calibrate, read_labels
    from ._data import load_samples
    from ._deprecated import evaluate_batch
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
    from ._local import DEFAULT_MODEL, LocalJudge, ModelInfo, resolve_model
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
