"""The results of the recall family beyond ContextRecall's: each metric's result type and the
per-item records it carries."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from .schemas import RecallResult

__all__ = [
    "ChunkRecallResult",
    "ChunkRelevance",
    "ChunkVerdict",
    "PrecisionResult",
    "QuestionRecallResult",
    "RecallPrecisionResult",
    "RelevantItem",
    "RetrievalResult",
    "SubQuestionVerdict",
    "SufficiencyResult",
]


class ChunkVerdict(BaseModel):
    """ChunkRecall's decision on one retrieved chunk."""

    chunk_id: str
    relevant: bool = Field(description="The chunk helps answer the question.")
    reflected: bool | None = Field(
        None, description="Its key information is in the answer; None for an irrelevant chunk."
    )
    evidence: str | None = Field(
        None, description="The answer's sentence (or verified quote) that reflects the chunk."
    )
    missing: str | None = Field(
        None, description="The relevant chunk's text when the answer leaves it out."
    )
    reason: str = ""


class ChunkRecallResult(RecallResult):
    """ChunkRecall's outcome: ``missing`` lists the left-out information, ``chunks`` says where."""

    metric: str = "chunk_recall"
    chunks: list[ChunkVerdict] = Field(default_factory=list)


class SubQuestionVerdict(BaseModel):
    """QuestionRecall's decision on one sub-question."""

    question: str
    answerable: bool = Field(description="The contexts answer this sub-question.")
    chunk_ids: list[str] = Field(default_factory=list, description="Chunks cited as the source.")
    answer: str | None = Field(None, description="The short answer found in the contexts.")
    missing: str | None = Field(None, description="What the contexts lack to answer it.")
    reason: str = ""
    p_answered: float | None = Field(
        None, description="Sufficiency: P(answerable), from the logprobs of the judge's verdict."
    )
    evidence_verified: bool = Field(
        False, description="Sufficiency: the answer's words were found in the cited chunk."
    )
    turn: int | None = Field(
        None,
        description="Sufficiency in a conversation: the earlier turn (from 1) whose retrieved "
        "contexts answer this sub-question (``chunk_ids`` are that turn's); None for this "
        "turn's contexts.",
    )


class QuestionRecallResult(RecallResult):
    """QuestionRecall's outcome: ``missing`` lists the sub-questions the contexts leave open."""

    metric: str = "question_recall"
    sub_questions: list[SubQuestionVerdict] = Field(default_factory=list)


class SufficiencyResult(RecallResult):
    """Sufficiency's outcome: ``score`` is the share of sub-questions answered with checked
    evidence; ``missing`` lists the others; ``p_sufficient`` is the mean P(answerable), a
    graded score for ranking (None where the judge gives no logprobs)."""

    metric: str = "sufficiency"
    sub_questions: list[SubQuestionVerdict] = Field(default_factory=list)
    p_sufficient: float | None = None


class RelevantItem(BaseModel):
    """One known-relevant document or passage, and where (if anywhere) it was retrieved."""

    id: str = Field(description="Its id; for text matching, its 1-based position.")
    text: str | None = Field(None, description="The reference passage, for text matching.")
    grade: float = Field(1.0, description="Graded relevance (1.0 when not given).")
    retrieved: bool
    rank: int | None = Field(None, description="1-based rank where it was first retrieved.")
    chunk_id: str | None = Field(None, description="The retrieved chunk that matched it.")
    similarity: float | None = Field(None, description="Best text similarity in [0, 1].")


class RetrievalResult(RecallResult):
    """RetrievalRecall's outcome; ``score`` is ``recall``. Ranks are 1-based."""

    metric: str = "retrieval_recall"
    match: Literal["ids", "text"] | None = None
    items: list[RelevantItem] = Field(default_factory=list)
    retrieved_count: int = 0
    recall: float | None = None
    recall_at: dict[int, float] = Field(
        default_factory=dict, description="Recall within the top k, for k <= retrieved_count."
    )
    hit_rate: float | None = Field(None, description="1.0 if any relevant item was retrieved.")
    mrr: float | None = Field(None, description="1 / rank of the first relevant item, else 0.")
    ndcg: float | None = Field(None, description="nDCG over the retrieved list (linear gains).")


class ChunkRelevance(BaseModel):
    """ContextPrecision's decision on one retrieved chunk."""

    chunk_id: str
    rank: int = Field(description="1-based position in the retrieved list.")
    relevant: bool
    reason: str = ""


class PrecisionResult(RecallResult):
    """ContextPrecision's outcome; ``score`` is ``precision``."""

    metric: str = "context_precision"
    chunks: list[ChunkRelevance] = Field(default_factory=list)
    precision: float | None = None
    average_precision: float | None = Field(
        None, description="Mean of precision@k over the ranks k of the relevant chunks."
    )


class RecallPrecisionResult(RecallResult):
    """ContextRecall and ContextPrecision in one report; ``score`` is ``f1``.

    ``claims``, ``verdicts`` and ``missing`` come from ContextRecall; ``chunks`` from
    ContextPrecision.
    """

    metric: str = "recall_precision"
    recall: float | None = None
    precision: float | None = None
    average_precision: float | None = None
    f1: float | None = None
    chunks: list[ChunkRelevance] = Field(default_factory=list)
