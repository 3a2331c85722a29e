"""The embedded judge end to end: an evaluator on a real query engine, and the quickstart
notebook executed with nbclient. Slow (minutes on two cores): run with ``pytest -m judge``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.evaluation.ragrecall import ContextRecallEvaluator

from notebooks import run_notebook
from ragrecall import JudgeModelError
from ragrecall.judges import resolve_model

pytestmark = pytest.mark.judge

NOTEBOOK = Path(__file__).resolve().parents[4] / "notebooks" / "llamaindex_quickstart.ipynb"


@pytest.fixture(scope="module", autouse=True)
def judge_model() -> None:
    try:
        resolve_model()
    except JudgeModelError as exc:
        pytest.skip(f"no judge model: {exc}")


def test_default_evaluator_on_a_real_query_engine(query_engine: BaseQueryEngine) -> None:
    query = "Where is the Eiffel Tower?"
    result = ContextRecallEvaluator().evaluate_response(
        query=query,
        response=query_engine.query(query),
        reference="The Eiffel Tower is in Paris. The Eiffel Tower is made of gold.",
    )
    assert not result.invalid_result, result.invalid_reason
    assert result.recall is not None and result.score is not None
    assert 0.0 < result.score < 1.0
    for verdict in result.recall.verdicts:
        if verdict.attributed:
            assert verdict.chunk_ids == ["eiffel"]
    assert any("gold" in claim for claim in result.recall.missing)


def test_quickstart_notebook_runs_offline() -> None:
    notebook = run_notebook(NOTEBOOK, cwd=NOTEBOOK.parent)
    summary_cell = next(c for c in notebook.cells if "summary" in c.metadata.get("tags", []))
    text = "".join(o.get("text", "") for o in summary_cell.outputs if o.output_type == "stream")
    summary = json.loads(text.strip().splitlines()[-1])
    assert summary["batch_invalid"] == [False, False, False]
    assert all(0.0 <= s <= 1.0 for s in summary["batch_scores"])
    assert summary["top_nodes"] == ["eiffel", "python", "bananas"]
    eiffel, python, bananas = summary["report_scores"]
    assert python == 1.0 and eiffel < 1.0 and bananas < 1.0
    assert any("gold" in claim for claim in summary["report_missing"][0])
    assert any("blue" in claim for claim in summary["report_missing"][2])
