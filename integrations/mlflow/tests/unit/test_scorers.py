"""Scorers called as MLflow calls them, on contexts in the inputs (the traces are in
tests/system): the Feedback's value, rationale, source and metadata; unusable input and a
judge that is down are Feedback with an error, never an exception."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mlflow.entities import AssessmentSourceType, Feedback
from mlflow.genai.scorers import Scorer
from mlflow_ragrecall import (
    ContextPrecisionScorer,
    ContextRecallScorer,
    QuestionRecallScorer,
    RecallScorer,
    RetrievalRecallScorer,
    get_scorer,
    rationale,
)

from ragrecall import ContextRecall, QuestionRecall

EIFFEL = "The Eiffel Tower is in Paris. The Eiffel Tower was finished in 1889."
CONTEXTS = [
    {"page_content": "The Eiffel Tower is in Paris.", "id": "eiffel", "metadata": {"score": 0.9}},
    {"page_content": "Cats purr when they are content.", "metadata": {"doc_uri": "cats.txt"}},
]
INPUTS = {"question": "Where is the Eiffel Tower?", "contexts": CONTEXTS}


def one(feedbacks: list[Feedback]) -> Feedback:
    (feedback,) = feedbacks
    return feedback


def test_context_recall_feedback_cites_the_documents_ids(judge: Any) -> None:
    scorer = ContextRecallScorer(judge, claims="sentences")
    assert isinstance(scorer, Scorer) and scorer.name == "context_recall"
    feedback = one(scorer(inputs=INPUTS, expectations={"expected_response": EIFFEL}))
    assert feedback.name == "context_recall" and feedback.value == 0.5 and feedback.error is None
    assert feedback.rationale == (
        "1 of 2 claims supported.\n"
        "- supported: The Eiffel Tower is in Paris. "
        '(chunk eiffel: "The Eiffel Tower is in Paris.")\n'
        "- missing: The Eiffel Tower was finished in 1889. (the judge found no support)"
    )
    assert feedback.source.source_type == AssessmentSourceType.LLM_JUDGE
    assert feedback.source.source_id == "scripted"  # the judge's model name
    assert feedback.metadata is not None
    assert feedback.metadata["mlflow.scorer.framework"] == "ragrecall"
    assert (feedback.metadata["claims"], feedback.metadata["missing"]) == ("2", "1")
    # the verdicts as fields too, one JSON list (MLflow's metadata holds text)
    assert json.loads(feedback.metadata["verdicts"]) == [
        {"claim": "The Eiffel Tower is in Paris.", "supported": True, "chunk_ids": ["eiffel"],
         "evidence": "The Eiffel Tower is in Paris.", "p_supported": None},
        {"claim": "The Eiffel Tower was finished in 1889.", "supported": False, "chunk_ids": [],
         "evidence": None, "p_supported": None},
    ]  # fmt: skip
    assert feedback.span_id is None  # read from the inputs, not from a span


def test_expected_facts_are_the_claims(judge: Any) -> None:
    expectations = {"expected_facts": ["The Eiffel Tower is in Paris", "Cats purr"]}
    feedback = one(ContextRecallScorer(judge)(inputs=INPUTS, expectations=expectations))
    assert feedback.value == 1.0
    assert "(chunk cats.txt:" in str(feedback.rationale)  # doc_uri: the chunk's id
    assert len(judge.calls) == 1  # the verdicts only: given claims are not decomposed


def test_a_single_context_string_and_a_chat_request(judge: Any) -> None:
    inputs = {"messages": [{"role": "user", "content": "Where?"}], "context": "Cats purr."}
    feedback = one(get_scorer("context_recall", judge, claims="sentences")(
        inputs=inputs, outputs={"choices": [{"message": {"content": "Cats purr."}}]},
        expectations={"reference": "Cats purr."},
    ))  # fmt: skip
    assert feedback.value == 1.0


def test_input_without_contexts_is_an_error_feedback(judge: Any) -> None:
    feedback = one(ContextRecallScorer(judge)(inputs={"question": "q"}, expectations={}))
    assert feedback.value is None and feedback.error is not None
    assert feedback.error.error_code == "INVALID_PARAMETER_VALUE"
    assert "no RETRIEVER span" in str(feedback.error.error_message)
    bad = {"contexts": [{"metadata": {}}]}
    feedback = one(ContextRecallScorer(judge)(inputs=bad, expectations={"reference": "x"}))
    assert feedback.error is not None and "no text" in str(feedback.error.error_message)
    assert judge.calls == []


def test_a_judge_that_is_down_is_an_error_feedback(failing_judge: Any) -> None:
    scorer = ContextRecallScorer(failing_judge, claims="sentences", max_retries=0)
    feedback = one(scorer(inputs=INPUTS, expectations={"expected_response": EIFFEL}))
    assert feedback.value is None and feedback.error is not None
    assert feedback.error.error_code == "ConnectionError"
    assert feedback.rationale == f"Unscorable: {feedback.error.error_message}"
    assert feedback.metadata is not None and feedback.metadata["status"] == "unscorable"


def test_no_reference_is_unscorable_not_zero(judge: Any) -> None:
    feedback = one(ContextRecallScorer(judge)(inputs=INPUTS, expectations=None))
    assert feedback.value is None and feedback.error is not None
    assert feedback.error.error_code == "_OTHER"  # no exception: the reference is missing


def test_retrieval_recall_reads_mlflows_expected_retrieved_context() -> None:
    expectations = {"expected_retrieved_context": [{"doc_uri": "cats.txt"}, {"doc_uri": "x"}]}
    feedback = one(RetrievalRecallScorer()(inputs=INPUTS, expectations=expectations))
    assert feedback.value == 0.5
    assert feedback.source.source_type == AssessmentSourceType.CODE
    assert feedback.metadata is not None and feedback.metadata["hit_rate"] == "1.0"
    assert "- relevant cats.txt: retrieved at rank 2" in str(feedback.rationale)
    assert "- relevant x: not retrieved" in str(feedback.rationale)


def test_chunk_verdicts_make_the_rationale_of_precision(judge: Any) -> None:
    expectations = {"expected_response": EIFFEL}
    feedback = one(ContextPrecisionScorer(judge)(inputs=INPUTS, expectations=expectations))
    assert feedback.value == 0.5 and feedback.error is None
    assert feedback.metadata is not None and feedback.metadata["precision"] == "0.5"
    assert "- chunk eiffel: relevant\n- chunk cats.txt: not relevant" in str(feedback.rationale)


def test_any_metric_object_and_a_name_of_ones_own(judge: Any) -> None:
    scorer = RecallScorer(ContextRecall(judge, claims="sentences"), name="recall_at_4")
    feedback = one(scorer(inputs=INPUTS, expectations={"expected_response": EIFFEL}))
    assert feedback.name == "recall_at_4" and scorer.metric.name == "context_recall"
    assert rationale(ContextRecall(judge, claims="sentences").score({
        "reference": "Cats purr.", "retrieved_contexts": ["Cats purr."]
    })).startswith("1 of 1 claims supported.")  # fmt: skip


@pytest.mark.parametrize(
    ("judge", "model"),
    [("openai:/gpt-4o-mini", "gpt-4o-mini"), ("openai:gpt-4o-mini", "gpt-4o-mini")],
)
def test_mlflows_model_uris_name_the_judge(
    judge: str, model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # built, never called
    scorer = get_scorer("context_recall", judge)
    assert scorer.metric.judge_id().endswith(model)


def test_get_scorer_names_the_choices() -> None:
    with pytest.raises(ValueError, match="unknown metric 'recall'; choose from context_recall"):
        get_scorer("recall")
    with pytest.raises(ValueError, match="takes no judge"):
        get_scorer("retrieval_recall", "openai:gpt-4o-mini")
    assert isinstance(get_scorer("retrieval_recall"), RetrievalRecallScorer)


def test_the_deprecated_question_recall_scorer_works_and_warns_once(judge: Any) -> None:
    """QuestionRecall gives way to Sufficiency: its scorer, named or by name, warns once (the
    metric's warning, at the caller's line) and still scores."""
    for by_name in (False, True):
        with pytest.warns(DeprecationWarning, match="Sufficiency") as caught:
            scorer = (
                get_scorer("question_recall", judge) if by_name else QuestionRecallScorer(judge)
            )
        assert len(caught) == 1 and caught[0].filename == __file__
        assert isinstance(scorer.metric, QuestionRecall)
        assert one(scorer(inputs=INPUTS)).value == 1.0
