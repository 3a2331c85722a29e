"""The public surface is exactly this, and the package says what it is."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import phoenix_ragrecall

# fmt: off
EXPECTED = [
    "RecallEvaluator", "RecallInput", "annotations_from_traces_out", "explanation",
    "log_span_annotations", "log_traces_out", "span_annotations",
]
# fmt: on


def test_all_is_pinned() -> None:
    assert sorted(phoenix_ragrecall.__all__) == EXPECTED
    for name in EXPECTED:
        assert getattr(phoenix_ragrecall, name) is not None


def test_the_package_is_typed_and_classified() -> None:
    assert (Path(phoenix_ragrecall.__file__).parent / "py.typed").exists()
    meta = importlib.metadata.metadata("phoenix-ragrecall")
    assert "Typing :: Typed" in meta.get_all("Classifier")
    requires = meta.get_all("Requires-Dist")
    assert any(r.startswith("arize-phoenix-client") for r in requires)
    assert any(r.startswith("arize-phoenix-evals") for r in requires)
