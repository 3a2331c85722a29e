"""A dialogue (a row with ``turns``) is read as one sample per turn, each with the turns before
it as its history, so ``evaluate`` scores every turn and its results keep the turn's index."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragrecall import (
    ClaimCache,
    SampleError,
    Sufficiency,
    SufficiencyResult,
    evaluate,
    load_samples,
)
from ragrecall.testing import ScriptedJudge

DIALOGUE: dict[str, Any] = {
    "sample_id": "chat-7",
    "turns": [
        {
            "question": "Where is the Eiffel Tower?",
            "answer": "In Paris.",
            "retrieved_contexts": ["The Eiffel Tower is in Paris, France."],
        },
        {
            "question": "When was it completed?",
            "answer": "In 1889.",
            "retrieved_contexts": ["The Eiffel Tower was completed in 1889."],
        },
        {"question": "How tall is it?", "retrieved_contexts": ["Bananas are yellow."]},
    ],
}


def test_each_turn_is_a_sample_with_the_turns_before_it(tmp_path: Path) -> None:
    data = tmp_path / "dialogues.jsonl"
    data.write_text(json.dumps(DIALOGUE) + "\n" + json.dumps({**DIALOGUE, "sample_id": None}))
    samples = load_samples(data)
    assert [s.sample_id for s in samples] == [
        f"{d}#{k}" for d in ("chat-7", "2") for k in (1, 2, 3)
    ]
    first, second, third = samples[:3]
    assert first.history is None and first.user_input == "Where is the Eiffel Tower?"
    assert second.history is not None and [t.question for t in second.history] == [
        "Where is the Eiffel Tower?"
    ]
    assert third.history is not None and len(third.history) == 2
    assert third.history[1].answer == "In 1889."
    assert third.history[1].retrieved_contexts == second.retrieved_contexts
    assert len({s.key() for s in samples}) == 6


def test_evaluate_scores_every_turn() -> None:
    metric = Sufficiency(ScriptedJudge(), cache=ClaimCache())
    report = evaluate([DIALOGUE], [metric], show_progress=False)
    results = report.results["sufficiency"]
    assert [s.sample_id for s in report.samples] == ["chat-7#1", "chat-7#2", "chat-7#3"]
    assert [r.score for r in results] == [1.0, 1.0, 0.0]
    assert [r.standalone_question for r in results if isinstance(r, SufficiencyResult)] == [
        None,
        "When was the Eiffel Tower completed?",
        "How tall is the Eiffel Tower?",
    ]


@pytest.mark.parametrize(
    ("turns", "field", "words"),
    [
        ([], "turns", "non-empty list"),
        ("Where?", "turns", "non-empty list"),
        ([DIALOGUE["turns"][0], "When?"], "turns[1]", "expected a mapping"),
        ([DIALOGUE["turns"][0], {"answer": "x"}], "turns[1]", "needs its question"),
        ([{"question": "q", "retrieved_contexts": "x"}], "turns[0].retrieved_contexts", "one"),
    ],
)
def test_a_bad_dialogue_names_the_turn(turns: Any, field: str, words: str) -> None:
    with pytest.raises(SampleError) as caught:
        load_samples([{"sample_id": "d", "turns": turns}])
    assert caught.value.row == 0 and caught.value.field == field
    assert words in str(caught.value)
