"""The package: its public names, and the namespace it shares with llama-index-core."""

from __future__ import annotations

import sys
from pathlib import Path

import llama_index
import llama_index.core
import llama_index.evaluation.ragrecall as package
import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]


def test_public_names() -> None:
    # fmt: off
    assert package.__all__ == [
        "ChunkRecallEvaluator", "ContextPrecisionEvaluator", "ContextRecallEvaluator",
        "LlamaIndexJudge", "Measure", "QuestionRecallEvaluator", "RecallCapture",
        "RecallEvaluationResult", "RecallEvaluator", "RecallPrecisionEvaluator", "ReferenceLookup",
        "ResponseRecallEvaluator", "RetrievalRecallMetric", "SufficiencyEvaluator",
        "aevaluate_query_engine", "as_judge",
        "chunks_from_nodes", "evaluate_query_engine",
    ]
    # fmt: on
    assert all(hasattr(package, name) for name in package.__all__)
    with pytest.warns(DeprecationWarning, match="JudgeSpec is deprecated"):
        assert package.JudgeSpec is not None


def test_namespace_portion_does_not_shadow_llama_index_core() -> None:
    assert not (ROOT / "llama_index" / "__init__.py").exists()
    assert not (ROOT / "llama_index" / "evaluation" / "__init__.py").exists()
    assert (ROOT / "llama_index" / "evaluation" / "ragrecall" / "py.typed").exists()
    portions = [Path(p).resolve() for p in llama_index.__path__]
    assert ROOT / "llama_index" in portions and len(portions) >= 2
    assert Path(llama_index.core.__file__ or "").parent.parent in portions
    assert Path(package.__file__ or "").parent == ROOT / "llama_index" / "evaluation" / "ragrecall"


def test_distribution_metadata() -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["project"]["name"] == "llama-index-evaluation-ragrecall"
    deps = [d.split(">")[0].split("=")[0] for d in meta["project"]["dependencies"]]
    assert deps == ["ragrecall", "llama-index-core"]
    assert meta["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == ["llama_index"]


def test_constructors_refuse_unknown_keywords() -> None:
    """A misspelt keyword is an error, never silently ignored."""
    from fakes import ScriptedJudge
    from llama_index.core.llms import MockLLM
    from pydantic import ValidationError

    from ragrecall import ClaimCache, ContextRecall, RecallLogger

    metric = ContextRecall(ScriptedJudge(), cache=ClaimCache())
    logger = RecallLogger([metric], [], inline=True)
    builds = [
        lambda: package.ContextRecallEvaluator(ScriptedJudge(), passing_scor=0.5),
        lambda: package.RecallEvaluator(metric, pasing_score=0.5),
        lambda: package.RetrievalRecallMetric(measure="recall", kk=3),
        lambda: package.LlamaIndexJudge(llm=MockLLM(), temprature=0),
        lambda: package.RecallCapture(logger, {}, sink=None),
    ]
    for build in builds:
        with pytest.raises((TypeError, ValidationError)):
            build()
    logger.close()
