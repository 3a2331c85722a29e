"""notebooks/report_display.ipynb runs in a real kernel on the fakes (offline) and shows the
report's display, its page and the samples a budget never reached."""

from __future__ import annotations

from pathlib import Path

from notebooks import run_notebook

NOTEBOOK = Path(__file__).resolve().parents[3] / "notebooks" / "report_display.ipynb"


def outputs(cell: dict) -> tuple[str, str]:  # type: ignore[type-arg]
    """The cell's printed text and its HTML display."""
    text = "".join(o.get("text", "") for o in cell["outputs"] if o["output_type"] == "stream")
    html = "".join(o.get("data", {}).get("text/html", "") for o in cell["outputs"])
    return text, html


def test_the_notebook_shows_the_report(tmp_path: Path) -> None:
    code = [c for c in run_notebook(NOTEBOOK, cwd=tmp_path).cells if c.cell_type == "code"]
    _, shown = outputs(code[0])
    assert "ragrecall: 6 of 6 samples" in shown and "lowest context_recall" in shown
    assert "missing: Birds sing 0." in shown and "<script" not in shown
    printed, _ = outputs(code[1])
    assert printed == "<!DOCTYPE html> True\n"
    assert (tmp_path / "report.html").read_text("utf-8").startswith("<!DOCTYPE html>")
    printed, shown = outputs(code[2])
    assert printed == "unscorable: [] not reached: [3, 4, 5]\n"
    assert "ragrecall: 3 of 6 samples" in shown
    _, table = outputs(code[3])
    assert table.count("not_reached") == 3 and table.count("scored") == 3
    assert not [o for c in code for o in c["outputs"] if o["output_type"] == "error"]
    stderr = [o for c in code for o in c["outputs"] if o.get("name") == "stderr"]
    assert not stderr  # the bar is a widget where ipywidgets is installed, else none
