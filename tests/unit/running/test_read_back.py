"""Results read back from ``ragrecall eval --out`` equal those ``evaluate()`` returns, field for
field and of the same type, for every metric (the claim cache may spare the second run a call,
so usage and time are left out of the comparison)."""

from __future__ import annotations

import json
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes import ScriptedJudge
from family_fakes import family_reply

from ragrecall import evaluate
from ragrecall.cli import main
from ragrecall.engines import read_records
from ragrecall.testing import recall_metric

METRICS = [
    "context_recall",
    "response_recall",
    "chunk_recall",
    pytest.param(  # deprecated, still read back
        "question_recall",
        marks=pytest.mark.filterwarnings("ignore:QuestionRecall is deprecated:DeprecationWarning"),
    ),
    "context_precision",
    "recall_precision",
    "retrieval_recall",
]

ROWS = [
    {
        "user_input": "What do dogs and cats do?",
        "reference": "Dogs bark at night. Cats purr when happy.",
        "retrieved_contexts": ["Dogs bark at night.", "Birds sing in spring."],
        "response": "Dogs bark at night.",
        "retrieved_ids": ["d1", "d3"],
        "reference_ids": ["d1", "d2"],
    },
    {
        "user_input": "Where do owls hunt?",
        "reference": "Owls hunt in forests.",
        "retrieved_contexts": ["Owls hunt in forests at dusk."],
        "response": "Owls hunt in forests.",
        "retrieved_ids": ["d9"],
        "reference_ids": ["d9"],
    },
]
VOLATILE = {"usage", "elapsed_s"}


@pytest.fixture
def factory(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    module = types.ModuleType("read_back_judges")
    module.family = lambda: ScriptedJudge(reply=family_reply)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "read_back_judges", module)
    yield "read_back_judges:family"


@pytest.mark.parametrize("name", METRICS)
def test_results_read_back_equal_the_run(name: str, factory: str, tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    out = tmp_path / "r.jsonl"
    argv = ["eval", str(data), "--metric", name, "--judge-factory", factory, "--out", str(out)]
    assert main([*argv, "--repeats", "2"]) == 0
    judge = ScriptedJudge(reply=family_reply)
    expected = evaluate(ROWS, [recall_metric(name, judge=judge)], repeats=2).results[name]
    loaded = sorted(read_records(out), key=lambda r: r.index)
    assert len(loaded) == len(expected)
    for record, want in zip(loaded, expected, strict=True):
        got = record.results[name]
        assert type(got) is type(want)
        assert got.model_dump(exclude=VOLATILE) == want.model_dump(exclude=VOLATILE)
        assert len(got.runs) == 2
