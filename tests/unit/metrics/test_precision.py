"""ContextPrecision (relevant / retrieved, average precision) and RecallPrecision (F1)."""

from __future__ import annotations

from typing import Any

import pytest
from fakes import ScriptedJudge, TextOnlyJudge
from family_fakes import family_reply, fresh_cache, human

from ragrecall import (
    ChunkRecall,
    ContextPrecision,
    ContextRecall,
    PrecisionResult,
    QuestionRecall,
    RecallPrecision,
    RecallPrecisionResult,
    ResponseRecall,
    RetrievalRecall,
    evaluate,
)
from ragrecall.testing import passages

SAMPLE: dict[str, Any] = {
    "user_input": "Tell me about the Eiffel Tower.",
    "reference": "The Eiffel Tower is in Paris. The Eiffel Tower is made of gold.",
    "retrieved_contexts": [
        "The Eiffel Tower is in Paris and opened in 1889.",
        "Bananas are yellow.",
        "Apples are red.",
        "The Eiffel Tower is tall.",
    ],
}


def judge() -> ScriptedJudge:
    return ScriptedJudge(reply=family_reply)


def precision(j: Any = None, **kwargs: Any) -> ContextPrecision:
    kwargs.setdefault("strategy", "per_chunk")
    return ContextPrecision(j or judge(), **kwargs)


def both(j: Any = None, **kwargs: Any) -> RecallPrecision:
    kwargs.setdefault("strategy", "per_claim")
    kwargs.setdefault("cache", fresh_cache())
    return RecallPrecision(j or judge(), **kwargs)


def average_precision(relevant: list[bool]) -> float | None:
    """ContextPrecision's average precision of chunks the judge finds relevant or not, in
    this order (None when it is unscorable)."""

    def reply(messages: Any) -> dict[str, bool]:
        (text,) = passages(messages).values()
        return {"relevant": text.startswith("relevant")}

    chunks = [f"{'relevant' if r else 'other'} chunk {i}" for i, r in enumerate(relevant)]
    sample = {"user_input": "q", "retrieved_contexts": chunks}
    return precision(ScriptedJudge(reply=reply)).score(sample).average_precision


def test_average_precision_by_hand() -> None:
    assert average_precision([True, False, False, True]) == pytest.approx((1 / 1 + 2 / 4) / 2)
    assert average_precision([False, True, True]) == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert average_precision([False, False]) == 0.0
    assert average_precision([]) is None  # no chunks: unscorable, not 0


def test_precision_and_average_precision_per_chunk() -> None:
    result = precision().score(SAMPLE)
    assert isinstance(result, PrecisionResult)
    assert result.metric == "context_precision" and result.status == "scored"
    assert result.score == result.precision == 0.5
    assert result.average_precision == pytest.approx(0.75)  # relevant at ranks 1 and 4
    assert [(c.chunk_id, c.rank, c.relevant) for c in result.chunks] == [
        ("1", 1, True),
        ("2", 2, False),
        ("3", 3, False),
        ("4", 4, True),
    ]
    assert result.usage.calls == 4


def test_question_and_reference_come_first_and_the_chunk_last() -> None:
    j = judge()
    precision(j).score(SAMPLE)
    prefixes = {human(call).split("\n\nPassage:\n")[0] for call in j.calls}
    assert prefixes == {
        f"Question: {SAMPLE['user_input']}\nReference answer: {SAMPLE['reference']}"
    }


async def test_async_matches_sync() -> None:
    sync = precision().score(SAMPLE)
    other = await precision().ascore(SAMPLE)
    assert other.model_dump(exclude={"elapsed_s"}) == sync.model_dump(exclude={"elapsed_s"})
    sync_both = both().score(SAMPLE)
    other_both = await both().ascore(SAMPLE)
    assert other_both.model_dump(exclude={"elapsed_s"}) == sync_both.model_dump(
        exclude={"elapsed_s"}
    )


def test_batched_precision_is_one_call() -> None:
    j = judge()
    result = precision(j, strategy="batched").score(SAMPLE)
    assert len(j.calls) == 1 and result.score == 0.5


def test_no_relevant_chunk_scores_zero_with_reason() -> None:
    sample = {**SAMPLE, "retrieved_contexts": ["Bananas are yellow."]}
    result = precision().score(sample)
    assert isinstance(result, PrecisionResult)
    assert result.score == 0.0 and result.average_precision == 0.0
    assert result.reason == "no retrieved chunk is relevant"


def test_precision_edge_cases_are_unscorable_with_reasons() -> None:
    j = judge()
    empty = precision(j).score({**SAMPLE, "retrieved_contexts": []})
    assert empty.status == "unscorable"
    assert empty.reason == "no retrieved contexts: precision is undefined"
    blind = precision(j).score({**SAMPLE, "user_input": "", "reference": None})
    assert blind.reason == "no question and no reference to judge relevance against"
    assert isinstance(blind, PrecisionResult) and j.calls == []


def test_question_alone_is_enough() -> None:
    j = judge()
    result = precision(j).score({**SAMPLE, "reference": None})
    assert result.score == 0.5
    assert "Reference answer: (not given)" in human(j.calls[0])


def test_recall_precision_combines_both_reports() -> None:
    result = both().score(SAMPLE)
    assert isinstance(result, RecallPrecisionResult)
    assert result.metric == "recall_precision" and result.status == "scored"
    assert result.recall == 0.5 and result.precision == 0.5
    assert result.score == result.f1 == pytest.approx(0.5)
    assert result.average_precision == pytest.approx(0.75)
    assert result.missing == ["The Eiffel Tower is made of gold."]
    assert result.verdicts[0].chunk_ids == ["1"] and len(result.chunks) == 4
    assert result.usage.calls == 1 + 2 + 4  # decomposition, two claims, four chunks


def test_f1_by_hand() -> None:
    sample = {**SAMPLE, "retrieved_contexts": SAMPLE["retrieved_contexts"][:3]}
    result = both().score(sample)
    assert isinstance(result, RecallPrecisionResult)
    # recall 1/2, precision 1/3: F1 = 2 * (1/6) / (5/6) = 0.4
    assert result.score == pytest.approx(0.4)


def test_recall_precision_edge_cases() -> None:
    empty = both().score({**SAMPLE, "retrieved_contexts": []})
    assert isinstance(empty, RecallPrecisionResult)
    assert empty.score == 0.0 and empty.recall == 0.0 and empty.precision is None
    assert empty.reason == "no retrieved contexts: recall is 0, precision undefined, F1 0"
    assert len(empty.missing) == 2
    no_ref = both().score({**SAMPLE, "reference": ""})
    assert no_ref.status == "unscorable"
    assert no_ref.reason == "recall: no claims: the reference is empty"


def test_recall_precision_uses_given_parts_and_their_judge() -> None:
    j = judge()
    recall = ContextRecall(j, "sentences", strategy="batched", cache=fresh_cache())
    result = RecallPrecision(recall=recall, precision=ContextPrecision(j, strategy="batched"))
    assert result.judge is j
    out = result.score(SAMPLE)
    assert out.score == pytest.approx(0.5) and len(j.calls) == 2


def test_judge_failure_is_unscorable() -> None:
    out = both(TextOnlyJudge(reply=lambda m: "nope"), max_retries=0).score(SAMPLE)
    assert out.status == "unscorable" and "invalid reply after a re-ask" in out.reason


@pytest.mark.filterwarnings("ignore:QuestionRecall is deprecated:DeprecationWarning")
def test_the_whole_family_runs_in_one_evaluate() -> None:
    j = judge()
    cache = fresh_cache()
    row = {
        **SAMPLE,
        "response": "The Eiffel Tower is in Paris.",
        "reference_ids": ["1", "4"],
    }
    metrics = [
        ContextRecall(j, cache=cache, strategy="per_claim"),
        ResponseRecall(j, cache=cache, strategy="per_claim"),
        ChunkRecall(j, strategy="per_chunk"),
        QuestionRecall(j, cache=cache),
        RetrievalRecall(),
        ContextPrecision(j, strategy="per_chunk"),
        RecallPrecision(j, cache=cache, strategy="per_claim"),
    ]
    report = evaluate([row], metrics, concurrency=1)
    assert all(r[0].status == "scored" for r in report.results.values()), report.results
    assert report.scores["retrieval_recall"] == 1.0
    assert report.scores["recall_precision"] == pytest.approx(0.5)
    frame = report.to_pandas()
    assert frame.loc[0, "chunk_recall_missing"] == [
        "The Eiffel Tower is in Paris and opened in 1889.",
        "The Eiffel Tower is tall.",
    ]
