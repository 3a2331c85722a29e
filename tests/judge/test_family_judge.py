"""The recall family with the real embedded judge, on tiny samples (one shared judge).

Slow (a minute or two on two cores): run with ``pytest -m judge``.
"""

from __future__ import annotations

from typing import Any

import pytest

import ragrecall
from ragrecall import (
    ChunkRecall,
    ChunkRecallResult,
    ContextPrecision,
    PrecisionResult,
    QuestionRecall,
    QuestionRecallResult,
    RecallPrecision,
    RecallPrecisionResult,
    ResponseRecall,
    Sufficiency,
    SufficiencyResult,
)

pytestmark = pytest.mark.judge

PARIS = "The Eiffel Tower is in Paris, France."
BUILT = "The Eiffel Tower was completed in 1889."
BANANAS = "Bananas are rich in potassium."
CLAIMS = ["The Eiffel Tower is in Paris.", "The Eiffel Tower was completed in 1889."]
QUESTION = "Where is the Eiffel Tower, and when was it completed?"


@pytest.fixture(scope="module")
def judge(local_judge: Any) -> Any:
    """The session's embedded judge (root conftest)."""
    return local_judge


def test_response_recall(judge: Any) -> None:
    sample = {
        "user_input": QUESTION,
        "reference_claims": CLAIMS,
        "response": "The Eiffel Tower stands in Paris.",
    }
    result = ResponseRecall(judge, cache=ragrecall.ClaimCache()).score(sample)
    assert result.status == "scored", result.reason
    assert result.missing == [CLAIMS[1]]
    assert result.verdicts[0].chunk_ids == ["response"]


def test_chunk_recall(judge: Any) -> None:
    sample = {
        "user_input": QUESTION,
        "response": "The Eiffel Tower is in Paris.",
        "retrieved_contexts": [PARIS, BUILT, BANANAS],
    }
    result = ChunkRecall(judge).score(sample)
    assert isinstance(result, ChunkRecallResult) and result.status == "scored", result.reason
    paris, built, bananas = result.chunks
    assert paris.relevant and paris.reflected
    assert built.relevant and not built.reflected and built.missing
    assert not bananas.relevant
    assert result.score == 0.5


@pytest.fixture(scope="module")
def question_recall(judge: Any) -> QuestionRecallResult:
    sample = {"user_input": QUESTION, "retrieved_contexts": [PARIS, BANANAS]}
    with pytest.warns(DeprecationWarning, match="Sufficiency"):  # deprecated; still tested
        metric = QuestionRecall(judge, cache=ragrecall.ClaimCache())
    result = metric.score(sample)
    assert isinstance(result, QuestionRecallResult)
    return result


def test_question_recall(question_recall: QuestionRecallResult) -> None:
    result = question_recall
    assert result.status == "scored", result.reason
    assert len(result.sub_questions) == 2
    where = next(s for s in result.sub_questions if "where" in s.question.lower())
    assert where.answerable and where.chunk_ids == ["1"]


def test_sufficiency_answers_only_what_a_passage_states(judge: Any) -> None:
    """QuestionRecall took "when was it completed?" as answered by the passage saying where it
    stands (an xfail here); Sufficiency needs the answer's words, with a time, in a passage."""
    sample = {"user_input": QUESTION, "retrieved_contexts": [PARIS, BANANAS]}
    result = Sufficiency(judge, cache=ragrecall.ClaimCache()).score(sample)
    assert isinstance(result, SufficiencyResult) and result.status == "scored", result.reason
    where = next(s for s in result.sub_questions if "where" in s.question.lower())
    when = next(s for s in result.sub_questions if "when" in s.question.lower())
    assert where.answerable and where.evidence_verified and where.chunk_ids == ["1"]
    assert not when.answerable and result.score == 0.5
    assert result.p_sufficient is not None
    both = Sufficiency(judge, cache=ragrecall.ClaimCache()).score(
        {"user_input": QUESTION, "retrieved_contexts": [PARIS, BUILT]}
    )
    assert isinstance(both, SufficiencyResult) and both.score == 1.0, both.sub_questions


def test_context_precision(judge: Any) -> None:
    sample = {"user_input": QUESTION, "retrieved_contexts": [BANANAS, PARIS]}
    result = ContextPrecision(judge).score(sample)
    assert isinstance(result, PrecisionResult) and result.status == "scored", result.reason
    assert [c.relevant for c in result.chunks] == [False, True]
    assert result.score == 0.5 and result.average_precision == 0.5


def test_recall_precision(judge: Any) -> None:
    sample = {
        "user_input": QUESTION,
        "reference_claims": CLAIMS,
        "retrieved_contexts": [PARIS, BANANAS],
    }
    result = RecallPrecision(judge, cache=ragrecall.ClaimCache()).score(sample)
    assert isinstance(result, RecallPrecisionResult) and result.status == "scored", result.reason
    assert result.recall == 0.5 and result.precision == 0.5
    assert result.missing == [CLAIMS[1]]
    assert result.f1 == pytest.approx(0.5)
