"""ragrecall metrics as phoenix-evals evaluators, run by phoenix-evals' own
``evaluate_dataframe``: a Score per row (JSON in ``<name>_score``), with the per-claim
explanation; an unscorable row is a Score labelled ``unscorable``, never an exception."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import pytest
from phoenix.evals import bind_evaluator, evaluate_dataframe
from phoenix_ragrecall import RecallEvaluator

from ragrecall import RetrievalRecall

EIFFEL = "The Eiffel Tower is in Paris. The Eiffel Tower was finished in 1889."


def scores(frame: pd.DataFrame, name: str) -> list[dict[str, Any]]:
    return [json.loads(cell) if isinstance(cell, str) else cell for cell in frame[f"{name}_score"]]


def test_evaluate_dataframe_scores_each_row(judge: Any) -> None:
    frame = pd.DataFrame(
        {
            "input": ["Where is the Eiffel Tower?", "Do cats purr?", "Where?"],
            "reference": [EIFFEL, "Cats purr when they are content.", ""],
            "context": [
                [{"document.id": "eiffel", "document.content": "The Eiffel Tower is in Paris."}],
                '["Cats purr when they are content."]',  # a JSON list, as a CSV cell holds one
                ["The Colosseum is in Rome."],
            ],
        }
    )
    evaluator = RecallEvaluator("context_recall", judge, claims="sentences")
    assert (evaluator.name, evaluator.kind, evaluator.direction) == (
        "context_recall", "llm", "maximize"
    )  # fmt: skip
    result = evaluate_dataframe(dataframe=frame, evaluators=[evaluator], hide_tqdm_bar=True)
    eiffel, cats, empty = scores(result, "context_recall")
    assert eiffel["score"] == 0.5
    assert eiffel["explanation"].splitlines() == [
        "1 of 2 claims supported.",
        "- supported: The Eiffel Tower is in Paris. "
        '(chunk eiffel: "The Eiffel Tower is in Paris.")',
        "- missing: The Eiffel Tower was finished in 1889. (the judge found no support)",
    ]
    assert eiffel["metadata"]["missing"] == ["The Eiffel Tower was finished in 1889."]
    verdicts = eiffel["metadata"]["verdicts"]
    assert [(v["claim"], v["supported"], v["chunk_ids"]) for v in verdicts] == [
        ("The Eiffel Tower is in Paris.", True, ["eiffel"]),
        ("The Eiffel Tower was finished in 1889.", False, []),
    ]
    assert cats["score"] == 1.0
    assert empty.get("score") is None and empty["label"] == "unscorable"
    assert empty["explanation"] == "Unscorable: no claims: the reference is empty"
    assert empty["metadata"]["error.type"] == "_OTHER"


def test_columns_of_other_names_through_bind_evaluator(judge: Any) -> None:
    frame = pd.DataFrame({"gold": ["Cats purr."], "docs": [["Cats purr."]]})
    evaluator = bind_evaluator(
        RecallEvaluator("context_recall", judge, claims="sentences"),
        {"reference": "gold", "context": "docs"},
    )
    (score,) = scores(evaluate_dataframe(frame, [evaluator], hide_tqdm_bar=True), "context_recall")
    assert score["score"] == 1.0


def test_a_judge_that_is_down_is_an_unscorable_score(failing_judge: Any) -> None:
    down = failing_judge
    evaluator = RecallEvaluator("context_recall", down, claims="sentences", max_retries=0)
    # The context says more than the reference, so the judge is asked (and fails).
    (score,) = evaluator.evaluate({"reference": "Cats purr.", "context": ["Cats purr, mostly."]})
    assert score.score is None and score.label == "unscorable"
    assert score.metadata["error.type"] == "ConnectionError"


def test_a_metric_object_and_an_unknown_name() -> None:
    evaluator = RecallEvaluator(RetrievalRecall(match="text"), name="text_recall")
    assert (evaluator.name, evaluator.kind) == ("text_recall", "code")
    with pytest.raises(ValueError, match="unknown metric 'recal'"):
        RecallEvaluator("recal")


def test_an_agents_steps_are_named_in_the_explanation_and_the_verdicts(judge: Any) -> None:
    """Chunks whose metadata says which retrieval step of an agent found them (as
    ``ragrecall.adapters.load_traces`` writes it): each supported claim names that step."""
    from ragrecall.adapters import RETRIEVAL_QUERY, RETRIEVAL_STEP

    evaluator = RecallEvaluator("context_recall", judge, claims="sentences")
    context = [
        {
            "document.id": "paris",
            "document.content": "The Eiffel Tower is in Paris, France.",
            "document.metadata": {RETRIEVAL_STEP: 1, RETRIEVAL_QUERY: "where is it"},
        },
        {
            "document.id": "built",
            "document.content": "The Eiffel Tower was finished in 1889, for a fair.",
            "document.metadata": {RETRIEVAL_STEP: 3, RETRIEVAL_QUERY: "when was it built"},
        },
    ]
    reference = "The Eiffel Tower is in Paris. The Eiffel Tower was finished in 1889."
    (score,) = evaluator.evaluate({"reference": reference, "context": context})
    assert score.score == 1.0
    assert 'retrieved at step 3 (query "when was it built")' in str(score.explanation)
    assert [v["step"] for v in score.metadata["verdicts"]] == [1, 3]
