"""The public surface, pinned (after httpx's ``tests/test_exported_members.py``): every name
``ragrecall`` and its public submodules export, nothing leaked beside them (``Any``,
``TYPE_CHECKING``, an imported module), and the old top-level names still working, with a
DeprecationWarning, for one minor version."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import ragrecall

# fmt: off
TOP = [
    "CalibrationError", "Chunk", "ChunkRecallResult", "ChunkRelevance",
    "ChunkVerdict", "ClaimCache", "ClaimSet", "ClaimVerdict",
    "EvaluationReport", "GenerationReport", "JudgeError", "JudgeInfo", "JudgeModelError",
    "JudgeRateLimitError",
    "Metric", "ModelIntegrityError", "NotAssessed", "PrecisionResult",
    "QuestionRecallResult", "RagrecallError", "RecallLogger",
    "RecallPrecisionResult", "RecallResult", "RelevantItem",
    "RetrievalResult", "Sample", "SampleError", "ScoredSample", "SubQuestionVerdict",
    "TracedSamples", "Usage", "__version__", "aevaluate", "agenerate", "astream", "calibrate",
    "evaluate",
    "generate", "load_samples", "load_traces",
    # the metrics (written from the metric list; test_metric_list.py checks the table)
    "ChunkRecall", "ContextPrecision", "ContextRecall", "QuestionRecall", "RecallPrecision",
    "ResponseRecall", "RetrievalRecall", "Sufficiency",
    # SufficiencyResult: Sufficiency's result type (sub-questions with P and checked answers)
    "SufficiencyResult",
    # load_chunks: the corpus as generate chunks it, so a retriever indexes the same chunks
    "load_chunks",
]
SUBMODULES = {
    "ragrecall.engines": [
        "BatchEngine", "Budget", "Engine", "LocalEngine", "MetricLike", "MetricSpec", "Outcome",
        "RunSettings", "factory", "server",
        # metric_classes: the built-in metrics, from which the adapters make their wrappers
        "metric_classes",
        # Record: what Engine.score's on_record passes; read_records: any engine's output read back
        "Record", "read_records",
    ],
    "ragrecall.judges": [
        "DEFAULT_MODEL", "JudgeLike", "LocalJudge", "ModelInfo", "Policy", "attribution_chain",
        "decomposition_chain", "resolve_judge", "resolve_model", "structured",
    ],
    "ragrecall.sinks": [
        "CallableSink", "JsonlSink", "LangSmithSink", "LoggerStats", "RecallRecord", "SQLiteSink",
        "Sink",
        # watch and its result (Watch, Window, Alarm): the logged records read back over time,
        # per window, a drop flagged (ragrecall watch's Python twin)
        "Alarm", "Watch", "Window", "watch",
    ],
    "ragrecall.calibration": [
        "Agreement", "AnswerLabel", "CalibrationProfile", "CorrectedDifference", "CorrectedMean",
        "Decision", "Label", "read_answer_labels", "read_labels",
    ],
    "ragrecall.text": [
        "claim_set_hash", "default_claim_cache", "evidence_refusal", "instructs_judge",
        "redact", "split_sentences", "word_overlap",
        # best_sentence: the sentence a claim's aligned evidence cites
        "best_sentence",
    ],
    "ragrecall.testing": [
        "RecallAssertionError", "Reply", "ScriptedJudge", "TextOnlyJudge", "aassert_recall",
        "assert_recall", "keyword_reply", "passages", "recall_metric",
    ],
    "ragrecall.prompts": [
        "ANSWERABLE_PROMPT", "BATCHED_PROMPT", "DECOMPOSE_PROMPT", "DECONTEXT_PROMPT",
        "PER_CLAIM_PROMPT", "PER_CLAIM_QUOTE_PROMPT", "PRECISION_BATCHED_PROMPT",
        "PRECISION_PROMPT", "PROMPT_VERSION", "SUB_QUESTIONS_PROMPT", "VERDICT_PREFIX",
        "VERDICT_VARIANTS", "Answerable", "BatchVerdict",
        # Sufficiency's prompt and its reply schema
        "SUFFICIENCY_PROMPT", "AnswerSpan", "BatchVerdicts", "Claims",
        "NumberedRelevance", "Passage", "PassageRenderer", "QuotedSupport", "Relevance",
        "Relevances", "Referent", "SubQuestions", "Support", "TokenSupport", "VerdictVariant",
        "render_passages", "response_format",
        # a conversation's question made to stand alone (Sufficiency's standalone_prompt=)
        "STANDALONE_PROMPT", "StandaloneQuestion",
    ],
    "ragrecall.stats": [
        "CLAIM_CORRELATION", "CONFORMAL_MIN_LABELS", "ECE_MIN_LABELS", "PPIResult",
        "PPI_MIN_LABELS", "PriorShift", "WilcoxonResult", "balanced_accuracy", "bootstrap_ci",
        "brier_score", "calibrated_ece", "cohen_kappa", "conformal_interval", "conformal_radius",
        "debiased_ece", "expected_calibration_error", "log_loss", "mean",
        "minimum_detectable_difference", "paired_effect_size", "ppi_difference", "ppi_mean",
        "prior_shift", "ranks", "share_interval", "sign_flip_test", "smallest_p_value",
        "t_quantile", "wilcoxon_signed_rank", "platt",
    ],
    "ragrecall.adapters": [
        "ReferenceBook", "References", "RunTree", "SampleKey", "as_reference", "blocking",
        "check_rate", "error_type", "sampled",
        # explanation, claim_metadata: the one wording and per-claim fields MLflow, Phoenix and
        # the traces' write-back share
        "claim_metadata", "explanation",
        # the chunk metadata keys naming the retrieval step (and its query) of an agent's chunk
        "RETRIEVAL_QUERY", "RETRIEVAL_STEP",
        # the live scoring of retrievals without a reference, shared by the adapters
        "LiveScorer", "LiveStats", "live_scorer", "no_reference_metric",
    ],
}
# fmt: on
LAZY = ["ragrecall", "ragrecall.engines", "ragrecall.judges", "ragrecall.sinks"]
LAZY += ["ragrecall.calibration", "ragrecall.text"]


def test_the_top_level_is_pinned_and_small() -> None:
    assert ragrecall.__all__ == sorted(TOP, key=str.casefold) or sorted(
        ragrecall.__all__
    ) == sorted(TOP)
    assert len(ragrecall.__all__) <= 50  # 48 before Sufficiency and its result
    assert dir(ragrecall) == ragrecall.__all__


@pytest.mark.parametrize("name", LAZY)
def test_every_name_loads_and_nothing_else_is_exported(name: str) -> None:
    """In a fresh interpreter: each exported name loads; then the module holds exactly them
    (``Any``, ``TYPE_CHECKING`` or a helper imported at the top would show here)."""
    code = (
        f"import {name} as m, types\n"
        "[getattr(m, n) for n in m.__all__]\n"
        "print(sorted(n for n, v in vars(m).items() if (not n.startswith('_') or "
        "n == '__version__') and not isinstance(v, types.ModuleType)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    module = importlib.import_module(name)
    assert out.stdout.strip() == repr(sorted(module.__all__))
    assert "Any" not in out.stdout and "TYPE_CHECKING" not in out.stdout


@pytest.mark.parametrize(("name", "expected"), SUBMODULES.items())
def test_public_submodules_are_pinned(name: str, expected: list[str]) -> None:
    module = importlib.import_module(name)
    assert sorted(module.__all__) == sorted(expected)
    assert all(getattr(module, n) is not None for n in expected)


@pytest.mark.parametrize("name", sorted(ragrecall._MOVED))
def test_a_moved_name_still_works_and_warns(name: str) -> None:
    with pytest.warns(DeprecationWarning, match=f"ragrecall.{name} is deprecated"):
        value = getattr(ragrecall, name)
    home = "ragrecall.engines" if name == "evaluate_batch" else ragrecall._MOVED[name]
    if name != "evaluate_batch":
        assert value is getattr(importlib.import_module(home), name)
    assert name not in ragrecall.__all__ and name not in dir(ragrecall)


def test_unknown_names_raise_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Any'"):
        ragrecall.Any  # noqa: B018
    with pytest.raises(AttributeError, match="no attribute 'TYPE_CHECKING'"):
        ragrecall.TYPE_CHECKING  # noqa: B018
