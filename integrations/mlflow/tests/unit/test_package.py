"""The public surface is exactly this, and the package says what it is."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import mlflow_ragrecall

# fmt: off
EXPECTED = [
    "ChunkRecallScorer", "ContextPrecisionScorer", "ContextRecallScorer", "Judge",
    "QuestionRecallScorer", "RecallPrecisionScorer", "RecallScorer", "ResponseRecallScorer",
    "RetrievalRecallScorer", "SufficiencyScorer", "as_feedback", "get_scorer", "make_metric",
    "rationale",
]
# fmt: on


def test_all_is_pinned() -> None:
    assert sorted(mlflow_ragrecall.__all__) == EXPECTED
    for name in EXPECTED:
        assert getattr(mlflow_ragrecall, name) is not None


def test_the_package_is_typed_and_classified() -> None:
    assert (Path(mlflow_ragrecall.__file__).parent / "py.typed").exists()
    meta = importlib.metadata.metadata("mlflow-ragrecall")
    assert "Typing :: Typed" in meta.get_all("Classifier")
    requires = meta.get_all("Requires-Dist")
    assert any(r.startswith("ragrecall") for r in requires)
    assert any(r.startswith("mlflow-skinny") for r in requires)
