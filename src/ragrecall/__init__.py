"""ragrecall: context recall for retrieval-augmented generation.

Split a reference answer into claims, ask a judge which retrieved chunk supports each claim
(with a verified quote), and score supported / total.

The top level holds the metrics, ``evaluate`` and its twins, ``generate`` (a checked test
set from a corpus) and ``load_chunks`` (the corpus as ``generate`` chunks it, to index), the
sample and result types, ``calibrate``, ``load_samples``, ``load_traces`` and the errors. The
building blocks live in public submodules: ``ragrecall.engines`` (where a dataset runs),
``ragrecall.judges``, ``ragrecall.sinks``, ``ragrecall.calibration``, ``ragrecall.text``,
``ragrecall.prompts``, ``ragrecall.stats``, ``ragrecall.adapters``, ``ragrecall.testing`` and
``ragrecall.ray``.
"""

import typing as _typing
import warnings as _warnings
from importlib import import_module as _import_module

__version__ = "0.1.0"

# Each public name and the module it lives in, imported on first use: `import ragrecall` (and
# the pytest plugin, a submodule) costs almost nothing until a name is asked for.
_EXPORTS: dict[str, str] = {
    "calibrate": "._analysis.calibrate",
    "load_samples": "._io.samples",
    "CalibrationError": "._core.errors",
    "JudgeError": "._core.errors",
    "JudgeModelError": "._core.errors",
    "JudgeRateLimitError": "._core.errors",
    "ModelIntegrityError": "._core.errors",
    "RagrecallError": "._core.errors",
    "SampleError": "._core.errors",
    "EvaluationReport": "._report.evaluation",
    "ScoredSample": "._running.engines.stream",
    "aevaluate": "._api",
    "astream": "._api",
    "evaluate": "._api",
    "agenerate": "._generate.run",
    "generate": "._generate.run",
    "GenerationReport": "._generate.run",
    "load_chunks": "._generate.run",
    "RecallLogger": "._running.logger",
    "Metric": "._metrics.base",
    "ClaimCache": "._metrics.claims.decompose",
    "ChunkRecallResult": "._core.results",
    "ChunkRelevance": "._core.results",
    "ChunkVerdict": "._core.results",
    "PrecisionResult": "._core.results",
    "QuestionRecallResult": "._core.results",
    "SufficiencyResult": "._core.results",
    "RecallPrecisionResult": "._core.results",
    "RelevantItem": "._core.results",
    "RetrievalResult": "._core.results",
    "SubQuestionVerdict": "._core.results",
    "Chunk": "._core.schemas",
    "ClaimSet": "._core.schemas",
    "ClaimVerdict": "._core.schemas",
    "JudgeInfo": "._core.schemas",
    "RecallResult": "._core.schemas",
    "Sample": "._core.schemas",
    "Usage": "._core.schemas",
    "NotAssessed": "._io.traces",
    "TracedSamples": "._io.traces",
    "load_traces": "._io.traces",
}

# Names that moved to a public submodule: they still work here, with a DeprecationWarning,
# until ragrecall 0.3.
_MOVED: dict[str, str] = {
    "Agreement": "ragrecall.calibration",
    "CalibrationProfile": "ragrecall.calibration",
    "Decision": "ragrecall.calibration",
    "Label": "ragrecall.calibration",
    "read_labels": "ragrecall.calibration",
    "evaluate_batch": "ragrecall._api",
    "DEFAULT_MODEL": "ragrecall.judges",
    "LocalJudge": "ragrecall.judges",
    "ModelInfo": "ragrecall.judges",
    "Policy": "ragrecall.judges",
    "attribution_chain": "ragrecall.judges",
    "decomposition_chain": "ragrecall.judges",
    "resolve_judge": "ragrecall.judges",
    "resolve_model": "ragrecall.judges",
    "structured": "ragrecall.judges",
    "CallableSink": "ragrecall.sinks",
    "JsonlSink": "ragrecall.sinks",
    "LangSmithSink": "ragrecall.sinks",
    "LoggerStats": "ragrecall.sinks",
    "RecallRecord": "ragrecall.sinks",
    "SQLiteSink": "ragrecall.sinks",
    "Sink": "ragrecall.sinks",
    "claim_set_hash": "ragrecall.text",
    "default_claim_cache": "ragrecall.text",
    "instructs_judge": "ragrecall.text",
    "split_sentences": "ragrecall.text",
    "word_overlap": "ragrecall.text",
}


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is not None:
        value = getattr(_import_module(module, __name__), name)
        globals()[name] = value
        return value
    moved = _MOVED.get(name)
    if moved is None:
        raise AttributeError(f"module 'ragrecall' has no attribute {name!r}")
    public = "ragrecall.engines.BatchEngine" if name == "evaluate_batch" else f"{moved}.{name}"
    _warnings.warn(
        f"ragrecall.{name} is deprecated and will be removed in ragrecall 0.3; use {public}",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(_import_module(moved), name)


def __dir__() -> list[str]:
    return list(__all__)


if _typing.TYPE_CHECKING:
    from ._analysis.calibrate import calibrate
    from ._api import aevaluate, astream, evaluate
    from ._core.errors import (
        CalibrationError,
        JudgeError,
        JudgeModelError,
        JudgeRateLimitError,
        ModelIntegrityError,
        RagrecallError,
        SampleError,
    )
    from ._core.results import (
        ChunkRecallResult,
        ChunkRelevance,
        ChunkVerdict,
        PrecisionResult,
        QuestionRecallResult,
        RecallPrecisionResult,
        RelevantItem,
        RetrievalResult,
        SubQuestionVerdict,
        SufficiencyResult,
    )
    from ._core.schemas import Chunk, ClaimSet, ClaimVerdict, JudgeInfo, RecallResult, Sample, Usage
    from ._generate.run import GenerationReport, agenerate, generate, load_chunks
    from ._io.samples import load_samples
    from ._io.traces import NotAssessed, TracedSamples, load_traces
    from ._metrics.base import Metric
    from ._metrics.claims.decompose import ClaimCache
    from ._report.evaluation import EvaluationReport
    from ._running.engines.stream import ScoredSample
    from ._running.logger import RecallLogger

__all__ = [
    "CalibrationError",
    "Chunk",
    "ChunkRecallResult",
    "ChunkRelevance",
    "ChunkVerdict",
    "ClaimCache",
    "ClaimSet",
    "ClaimVerdict",
    "EvaluationReport",
    "GenerationReport",
    "JudgeError",
    "JudgeInfo",
    "JudgeModelError",
    "JudgeRateLimitError",
    "Metric",
    "ModelIntegrityError",
    "NotAssessed",
    "PrecisionResult",
    "QuestionRecallResult",
    "RagrecallError",
    "RecallLogger",
    "RecallPrecisionResult",
    "RecallResult",
    "RelevantItem",
    "RetrievalResult",
    "Sample",
    "SampleError",
    "ScoredSample",
    "SubQuestionVerdict",
    "SufficiencyResult",
    "TracedSamples",
    "Usage",
    "__version__",
    "aevaluate",
    "agenerate",
    "astream",
    "calibrate",
    "evaluate",
    "generate",
    "load_chunks",
    "load_samples",
    "load_traces",
]

# The metrics, written from registry.METRICS by python -m ragrecall._metrics.registry
_EXPORTS |= {
    "ChunkRecall": "._metrics.chunk_recall",
    "ContextPrecision": "._metrics.context_precision",
    "ContextRecall": "._metrics.context_recall",
    "QuestionRecall": "._metrics.question_recall",
    "RecallPrecision": "._metrics.recall_precision",
    "ResponseRecall": "._metrics.response_recall",
    "RetrievalRecall": "._metrics.retrieval_recall",
    "Sufficiency": "._metrics.sufficiency",
}
if _typing.TYPE_CHECKING:
    from ._metrics.chunk_recall import ChunkRecall
    from ._metrics.context_precision import ContextPrecision
    from ._metrics.context_recall import ContextRecall
    from ._metrics.question_recall import QuestionRecall
    from ._metrics.recall_precision import RecallPrecision
    from ._metrics.response_recall import ResponseRecall
    from ._metrics.retrieval_recall import RetrievalRecall
    from ._metrics.sufficiency import Sufficiency
__all__ += [
    "ChunkRecall",
    "ContextPrecision",
    "ContextRecall",
    "QuestionRecall",
    "RecallPrecision",
    "ResponseRecall",
    "RetrievalRecall",
    "Sufficiency",
]
__all__.sort()
# (end of the metrics)
