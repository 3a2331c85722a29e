"""The quickstart notebook runs offline on the embedded judge and logs one record a question."""

from __future__ import annotations

from pathlib import Path

import pytest

from notebooks import run_notebook
from ragrecall import JudgeModelError
from ragrecall.engines import read_records
from ragrecall.judges import resolve_model

NOTEBOOK = Path(__file__).parents[4] / "notebooks" / "langchain_quickstart.ipynb"


@pytest.mark.judge
def test_quickstart_notebook_runs_and_logs_recall(tmp_path: Path) -> None:
    try:
        resolve_model()  # the notebook's ContextRecall() finds the model as users do
    except JudgeModelError as exc:
        pytest.skip(f"no judge model: {exc}")
    notebook = run_notebook(NOTEBOOK, cwd=tmp_path)

    log = tmp_path / "langchain_quickstart_records.jsonl"
    lines = log.read_text().splitlines()
    records = {r.query: r for r in read_records(log)}  # the results file's record shape
    assert len(lines) == 3 and len(records) == 3
    assert all(r.result.status == "scored" for r in records.values())
    assert all(r.run_id and r.extra["parent_run_id"] for r in records.values())
    eiffel = records["Where is the Eiffel Tower and when was it completed?"]
    assert {c.id for c in eiffel.chunks} == {"eiffel", "eiffel-1889"}
    assert eiffel.result.score == 1.0
    cats = records["Why do cats purr?"].result
    assert cats.score is not None and cats.score < 1.0 and cats.missing  # no document says so
    printed = "".join(
        out.get("text", "") for cell in notebook.cells for out in cell.get("outputs", [])
    )
    assert "recall 1.0 (scored)" in printed
