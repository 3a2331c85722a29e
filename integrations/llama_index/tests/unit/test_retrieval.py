"""RetrievalRecallMetric: hand-checked values, and inside LlamaIndex's RetrieverEvaluator."""

from __future__ import annotations

import math

import pytest
from llama_index.core import VectorStoreIndex
from llama_index.core.evaluation import RetrieverEvaluator
from llama_index.core.evaluation.retrieval.metrics import MRR, NDCG, HitRate
from llama_index.evaluation.ragrecall import RetrievalRecallMetric

EXPECTED = ["a", "b"]
RETRIEVED = ["x", "a", "y", "b"]


@pytest.mark.parametrize(
    ("measure", "k", "value"),
    [
        ("recall", None, 1.0),
        ("recall", 2, 0.5),
        ("recall", 1, 0.0),
        ("hit_rate", 1, 0.0),
        ("hit_rate", 2, 1.0),
        ("mrr", None, 0.5),
        ("mrr", 1, 0.0),
        # DCG = 1/log2(3) + 1/log2(5); ideal over 4 ranks = 1 + 1/log2(3)
        ("ndcg", None, (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3))),
        # top 2 = [x, a]: DCG = 1/log2(3); ideal = 1 + 1/log2(3)
        ("ndcg", 2, (1 / math.log2(3)) / (1 + 1 / math.log2(3))),
    ],
)
def test_hand_checked_values(measure: str, k: int | None, value: float) -> None:
    metric = RetrievalRecallMetric(measure, k=k)  # type: ignore[arg-type]
    result = metric.compute(expected_ids=EXPECTED, retrieved_ids=RETRIEVED)
    assert result.score == pytest.approx(value)


def test_names_and_metadata() -> None:
    assert RetrievalRecallMetric("recall", k=5).metric_name == "ragrecall_recall@5"
    assert RetrievalRecallMetric("ndcg").metric_name == "ragrecall_ndcg"
    result = RetrievalRecallMetric("recall", k=3).compute(
        expected_ids=EXPECTED, retrieved_ids=RETRIEVED
    )
    assert result.metadata == {"k": 3, "retrieved": 3, "ranks": {"a": 2, "b": None}}


def test_an_id_retrieved_twice_counts_once() -> None:
    metric = RetrievalRecallMetric("ndcg")
    twice = metric.compute(expected_ids=["a"], retrieved_ids=["a", "a", "x"])
    assert twice.score == pytest.approx(1.0)
    recall = RetrievalRecallMetric("recall").compute(
        expected_ids=["a", "b"], retrieved_ids=["a", "a"]
    )
    assert recall.score == 0.5


def test_missing_ids_raise_like_llamaindex_metrics() -> None:
    with pytest.raises(ValueError, match="expected ids"):
        RetrievalRecallMetric().compute(expected_ids=[], retrieved_ids=["a"])
    with pytest.raises(ValueError, match="expected ids"):
        RetrievalRecallMetric().compute(expected_ids=["a"], retrieved_ids=None)
    with pytest.raises(ValueError):
        RetrievalRecallMetric("recall", k=0)


def test_in_retriever_evaluator_with_a_real_retriever(index: VectorStoreIndex) -> None:
    evaluator = RetrieverEvaluator(
        metrics=[
            RetrievalRecallMetric("recall", k=1),
            RetrievalRecallMetric("recall"),
            RetrievalRecallMetric("mrr"),
            RetrievalRecallMetric("ndcg", k=2),
            HitRate(),
            MRR(),
        ],
        retriever=index.as_retriever(similarity_top_k=2),
    )
    # "Where is the Eiffel Tower?" retrieves [eiffel, moon]
    result = evaluator.evaluate("Where is the Eiffel Tower?", expected_ids=["moon", "banana"])
    assert result.retrieved_ids == ["eiffel", "moon"]
    assert result.metric_vals_dict == pytest.approx(
        {
            "ragrecall_recall@1": 0.0,
            "ragrecall_recall": 0.5,
            "ragrecall_mrr": 0.5,
            # moon at rank 2: DCG = 1/log2(3); ideal of length 2 = 1 + 1/log2(3)
            "ragrecall_ndcg@2": (1 / math.log2(3)) / (1 + 1 / math.log2(3)),
            "hit_rate": 1.0,
            "mrr": 0.5,
        }
    )


def test_ndcg_says_how_it_differs_from_llamaindex_and_offers_its_normalisation() -> None:
    expected, retrieved = ["a", "b", "c"], ["c", "x"]
    ours = RetrievalRecallMetric("ndcg").compute(expected_ids=expected, retrieved_ids=retrieved)
    theirs = NDCG().compute(expected_ids=expected, retrieved_ids=retrieved)
    as_theirs = RetrievalRecallMetric("ndcg", ndcg_ideal="relevant").compute(
        expected_ids=expected, retrieved_ids=retrieved
    )
    assert round(ours.score, 3) == 0.613 and round(theirs.score, 3) == 0.469
    assert as_theirs.score == pytest.approx(theirs.score)


def test_metrics_are_registered_under_their_names(index: VectorStoreIndex) -> None:
    names = ["ragrecall_recall", "ragrecall_ndcg", "ragrecall_mrr", "ragrecall_hit_rate", "mrr"]
    retriever = index.as_retriever(similarity_top_k=2)
    evaluator = RetrieverEvaluator.from_metric_names(names, retriever=retriever)
    result = evaluator.evaluate("Where is the Eiffel Tower?", expected_ids=["moon", "banana"])
    assert set(result.metric_vals_dict) == set(names)
    assert result.metric_vals_dict["ragrecall_recall"] == 0.5
    assert result.metric_vals_dict["ragrecall_mrr"] == result.metric_vals_dict["mrr"] == 0.5
