"""RetrievalRecall: ids and text matching, checked against hand-computed values."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from ragrecall import RetrievalRecall, RetrievalResult, Sample, SampleError, evaluate

# Relevant d1, d2, d5; retrieved d3 d1 d7 d2 d9: d1 at rank 2, d2 at rank 4, d5 missed.
IDS = {
    "reference_ids": ["d1", "d2", "d5"],
    "retrieved_ids": ["d3", "d1", "d7", "d2", "d9"],
}


def measure(sample: Mapping[str, Any], **kwargs: Any) -> RetrievalResult:
    result = RetrievalRecall(**kwargs).score(sample)
    assert isinstance(result, RetrievalResult)
    return result


def test_binary_relevance_by_hand() -> None:
    result = measure(IDS)
    assert result.status == "scored" and result.match == "ids"
    assert result.score == result.recall == pytest.approx(2 / 3)
    assert result.recall_at == pytest.approx({1: 0.0, 3: 1 / 3, 5: 2 / 3})  # no k=10, 20
    assert result.hit_rate == 1.0
    assert result.mrr == 0.5
    # DCG = 1/log2(3) + 1/log2(5) = 0.630930 + 0.430677 = 1.061606
    # IDCG = 1 + 1/log2(3) + 1/log2(4) = 1 + 0.630930 + 0.5 = 2.130930
    assert result.ndcg == pytest.approx(1.061606 / 2.130930, abs=1e-6)
    assert [(i.id, i.retrieved, i.rank) for i in result.items] == [
        ("d1", True, 2),
        ("d2", True, 4),
        ("d5", False, None),
    ]
    assert result.missing == ["d5"] and result.retrieved_count == 5
    assert result.judge is None and result.usage.calls == 0


def test_graded_relevance_by_hand() -> None:
    result = measure({**IDS, "relevance": {"d1": 3, "d2": 1, "d5": 2}})
    # DCG = 3/log2(3) + 1/log2(5) = 1.892789 + 0.430677 = 2.323466
    # IDCG = 3/1 + 2/log2(3) + 1/log2(4) = 3 + 1.261860 + 0.5 = 4.761860
    assert result.ndcg == pytest.approx(2.323466 / 4.761860, abs=1e-6)
    assert [i.grade for i in result.items] == [3, 1, 2]
    assert result.recall == pytest.approx(2 / 3)  # grades do not change recall


def test_relevance_alone_defines_the_relevant_ids() -> None:
    result = measure({"retrieved_ids": ["a", "b"], "relevance": {"a": 0, "b": 2, "c": 1}})
    assert [i.id for i in result.items] == ["b", "c"]
    assert result.recall == 0.5 and result.mrr == 0.5
    # DCG = 2/log2(3) = 1.261860; IDCG (truncated to 2 retrieved) = 2 + 1/log2(3) = 2.630930
    assert result.ndcg == pytest.approx(1.261860 / 2.630930, abs=1e-6)


def test_perfect_ranking_and_truncated_ideal() -> None:
    result = measure({"reference_ids": ["a", "b", "c"], "retrieved_ids": ["a", "b"]})
    assert result.ndcg == pytest.approx(1.0) and result.mrr == 1.0
    assert result.recall == pytest.approx(2 / 3) and result.recall_at == pytest.approx({1: 1 / 3})


def test_chunk_ids_stand_in_for_retrieved_ids_and_duplicates_count_once() -> None:
    sample = {
        "reference_ids": ["x", "y"],
        "retrieved_contexts": [
            {"id": "z", "text": "..."},
            {"id": "x", "text": "..."},
            {"id": "q", "text": "..."},
        ],
    }
    result = measure(sample)
    assert result.recall == 0.5 and result.mrr == 0.5
    dup = measure({"reference_ids": ["x"], "retrieved_ids": ["x", "x", "x"]})
    assert dup.ndcg == pytest.approx(1.0) and dup.recall_at == {1: 1.0, 3: 1.0}


def test_ks_are_configurable_and_limited_by_the_retrieved_count() -> None:
    ids = [str(i) for i in range(1, 13)]
    result = measure({"reference_ids": ["12", "2"], "retrieved_ids": ids}, ks=(2, 10, 12, 50))
    assert result.recall_at == {2: 0.5, 10: 0.5, 12: 1.0}
    default = measure({"reference_ids": ["12", "2"], "retrieved_ids": ids})
    assert sorted(default.recall_at) == [1, 3, 5, 10]


def test_nothing_retrieved_scores_zero_with_reason() -> None:
    result = measure({"reference_ids": ["a"], "retrieved_ids": []})
    assert result.score == 0.0 and result.reason == "nothing retrieved"
    assert (result.hit_rate, result.mrr, result.ndcg, result.recall_at) == (0.0, 0.0, 0.0, {})


def test_unscorable_without_anything_known_relevant() -> None:
    bare = measure({"retrieved_ids": ["a"]})
    assert bare.status == "unscorable" and bare.score is None
    assert bare.reason.startswith("nothing known to be relevant")
    empty = measure({"reference_ids": [" "], "retrieved_ids": ["a"]})
    assert empty.status == "unscorable" and "reference_ids is empty" in empty.reason
    text = measure({"reference_contexts": [], "retrieved_contexts": ["a"]})
    assert text.status == "unscorable" and text.reason.startswith("no reference_contexts")


TEXT = {
    "reference_contexts": [
        "The Eiffel Tower is in Paris.",
        "The tower opened in 1889.",
        "It is made of wrought iron.",
    ],
    "retrieved_contexts": [
        "Bananas are yellow.",
        "The Eiffel tower is in Paris!",
        "The tower was opened in 1889.",
    ],
}


def test_text_matching_by_similarity() -> None:
    result = measure(TEXT, similarity=0.8)
    assert result.match == "text"
    assert [(i.retrieved, i.rank, i.chunk_id) for i in result.items] == [
        (True, 2, "2"),
        (True, 3, "3"),
        (False, None, None),
    ]
    assert result.recall == pytest.approx(2 / 3) and result.mrr == 0.5
    assert result.missing == ["It is made of wrought iron."]
    first = result.items[0]
    assert first.text == "The Eiffel Tower is in Paris." and first.similarity is not None
    assert first.similarity >= 0.8
    assert result.items[2].similarity is not None and result.items[2].similarity < 0.8
    strict = measure(TEXT, similarity=0.99)
    assert strict.recall == 0.0


def test_partial_ratio_matches_passages_inside_longer_chunks() -> None:
    sample = {
        "reference_contexts": ["The tower opened in 1889."],
        "retrieved_contexts": [
            "Long intro text here. The tower opened in 1889. More text follows."
        ],
    }
    assert measure(sample, match="text", similarity=0.9).recall == 0.0
    assert measure(sample, match="text", similarity=0.9, scorer="partial_ratio").recall == 1.0


def test_retrieval_samples_keep_their_fields_through_evaluate() -> None:
    samples = [
        Sample(**IDS, relevance={"d1": 3, "d2": 1, "d5": 2}),
        Sample.model_validate(TEXT),
    ]
    report = evaluate(samples, [RetrievalRecall(similarity=0.8)])
    results = report.results["retrieval_recall"]
    assert [r.status for r in results] == ["scored", "scored"]
    assert isinstance(results[0], RetrievalResult)
    assert results[0].ndcg == pytest.approx(2.323466 / 4.761860, abs=1e-6)
    assert report.scores["retrieval_recall"] == pytest.approx(2 / 3)


async def test_async_matches_sync() -> None:
    metric = RetrievalRecall()
    sync, other = metric.score(IDS), await metric.ascore(IDS)
    assert other.model_dump(exclude={"elapsed_s"}) == sync.model_dump(exclude={"elapsed_s"})


def test_bad_input_and_options_raise() -> None:
    with pytest.raises(SampleError, match="reference_contexts"):
        RetrievalRecall().score({"reference_contexts": "one string"})
    with pytest.raises(ValueError, match="similarity"):
        RetrievalRecall(similarity=2)
    with pytest.warns(DeprecationWarning, match="similarity="):
        assert RetrievalRecall(threshold=0.8).similarity == 0.8
    with pytest.raises(ValueError, match="ks"):
        RetrievalRecall(ks=(0, 1))


def test_ndcg_normalised_by_the_retrieved_length_or_by_every_relevant_item() -> None:
    sample = Sample(reference_ids=["a", "b", "c"], retrieved_ids=["c", "x"])
    assert round(RetrievalRecall().measure(sample).ndcg or 0, 3) == 0.613
    assert round(RetrievalRecall(ndcg_ideal="relevant").measure(sample).ndcg or 0, 3) == 0.469
    with pytest.raises(ValueError, match="ndcg_ideal"):
        RetrievalRecall(ndcg_ideal="other")  # type: ignore[arg-type]
