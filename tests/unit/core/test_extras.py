"""Every path into an optional dependency names the extra to install when it is missing (a
missing module is simulated the way Python itself halts an import: None in sys.modules).
Parquet's is in test_files.py."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from ragrecall import EvaluationReport, LangSmithSink, RecallResult, Sample
from ragrecall.cli import main


def unload(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Forget ``name`` and its submodules (restored after the test), to import it afresh."""
    for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        monkeypatch.delitem(sys.modules, loaded)


def missing(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    for name in modules:
        unload(monkeypatch, name)
        monkeypatch.setitem(sys.modules, name, None)


def test_to_pandas_names_the_pandas_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    result = RecallResult(score=1.0, status="scored")
    report = EvaluationReport(
        samples=[Sample(user_input="q")], results={"context_recall": [result]}
    )
    missing(monkeypatch, "pandas")
    with pytest.raises(
        ModuleNotFoundError, match=r"to_pandas needs pandas: pip install 'ragrecall\[pandas\]'"
    ):
        report.to_pandas()


def test_importing_ragrecall_ray_names_the_ray_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    unload(monkeypatch, "ragrecall.ray")
    missing(monkeypatch, "ray")
    with pytest.raises(
        ModuleNotFoundError, match=r"ragrecall.ray needs ray: pip install 'ragrecall\[ray\]'"
    ) as caught:
        importlib.import_module("ragrecall.ray")
    assert caught.value.name == "ray.data"  # as Python names it


def test_eval_on_ray_names_the_ray_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text('{"user_input": "q", "reference": "A.", "retrieved_contexts": ["A."]}\n')
    unload(monkeypatch, "ragrecall.ray")
    missing(monkeypatch, "ray")
    assert main(["eval", str(data), "--engine", "ray", "--judge", "openai:gpt-4o-mini"]) == 2
    assert "--engine ray needs ray: pip install 'ragrecall[ray]'" in capsys.readouterr().err


def test_langsmith_sink_names_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    missing(monkeypatch, "langsmith")
    with pytest.raises(ModuleNotFoundError, match="LangSmithSink needs langsmith: pip install"):
        LangSmithSink()


def test_a_module_that_is_no_optional_dependency_is_left_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A bug (a module of the project itself missing) is not dressed up as a missing extra."""
    unload(monkeypatch, "ragrecall.ray")
    missing(monkeypatch, "ragrecall._running.engines.ray.gate")
    with pytest.raises(ModuleNotFoundError) as caught:
        importlib.import_module("ragrecall.ray")
    assert caught.value.name == "ragrecall._running.engines.ray.gate"
    assert "pip install" not in str(caught.value)
