"""evaluate_query_engine over a real query engine: source nodes captured in order, scored."""

from __future__ import annotations

from typing import Any

import pytest
from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.base.response.schema import RESPONSE_TYPE
from llama_index.core.query_engine import CustomQueryEngine
from llama_index.evaluation.ragrecall import aevaluate_query_engine, evaluate_query_engine

from ragrecall import ClaimCache, ContextRecall, RetrievalRecall
from ragrecall.testing import ScriptedJudge


def recall() -> ContextRecall:
    return ContextRecall(ScriptedJudge(), strategy="per_claim", cache=ClaimCache())


def test_captures_source_nodes_and_responses(
    query_engine: BaseQueryEngine, dataset: list[dict[str, Any]]
) -> None:
    report = evaluate_query_engine(query_engine, dataset, metrics=[recall()], concurrency=2)
    assert report.scores == {"context_recall": (0.5 + 1.0 + 0.5) / 3}
    for sample in report.samples:
        assert sample.user_input is not None
        direct = query_engine.query(sample.user_input)
        chunks = sample.retrieved_contexts
        assert [c.id for c in chunks] == [n.node.node_id for n in direct.source_nodes]
        assert [c.score for c in chunks] == [n.score for n in direct.source_nodes]
        assert [c.rank for c in chunks] == [1, 2]
        assert chunks[0].metadata == {"doc": chunks[0].id}
        assert sample.retrieved_ids == [c.id for c in chunks]
        assert sample.response == direct.response
    first = report.results["context_recall"][0]
    assert first.verdicts[0].chunk_ids == ["eiffel"]
    frame = report.to_pandas()
    assert list(frame["context_recall"]) == [0.5, 1.0, 0.5]
    assert list(frame["user_input"]) == [d["query"] for d in dataset]


async def test_async_version_and_several_metrics(
    query_engine: BaseQueryEngine, questions: dict[str, tuple[str, str]]
) -> None:
    dataset = [
        {"user_input": q, "reference": ref, "reference_ids": [doc]}
        for q, (ref, doc) in questions.items()
    ]
    report = await aevaluate_query_engine(
        query_engine, dataset, metrics=[recall(), RetrievalRecall(ks=[1])]
    )
    assert [r.score for r in report.results["context_recall"]] == [0.5, 1.0, 0.5]
    retrieval = report.results["retrieval_recall"]
    assert [r.score for r in retrieval] == [1.0, 1.0, 1.0]
    assert [getattr(r, "mrr", None) for r in retrieval] == [1.0, 1.0, 1.0]


class Flaky(CustomQueryEngine):
    """Delegates to a real engine, but fails on one question."""

    inner: Any

    def custom_query(self, query_str: str) -> RESPONSE_TYPE:
        if "Moon" in query_str:
            raise RuntimeError("index offline")
        response: RESPONSE_TYPE = self.inner.query(query_str)
        return response


def test_a_failing_query_is_unscorable_and_the_rest_are_scored(
    query_engine: BaseQueryEngine, dataset: list[dict[str, Any]]
) -> None:
    report = evaluate_query_engine(Flaky(inner=query_engine), dataset, metrics=[recall()])
    results = report.results["context_recall"]
    assert [r.status for r in results] == ["scored", "scored", "unscorable"]
    assert results[2].reason == "query failed: RuntimeError: index offline"
    assert report.samples[2].retrieved_contexts == []
    assert report.unscorable() == [2]
    assert report.usage.calls > 0


def test_default_metric_is_context_recall(query_engine: BaseQueryEngine) -> None:
    report = evaluate_query_engine(query_engine, [{"query": "q?"}])
    assert list(report.results) == ["context_recall"]
    assert report.results["context_recall"][0].reason == "no claims: the reference is empty"


def test_judge_builds_the_default_metric(
    query_engine: BaseQueryEngine, dataset: list[dict[str, Any]]
) -> None:
    report = evaluate_query_engine(query_engine, dataset, judge=ScriptedJudge())
    assert [r.score for r in report.results["context_recall"]] == [0.5, 1.0, 0.5]


def test_judge_and_metrics_together_are_refused(query_engine: BaseQueryEngine) -> None:
    with pytest.raises(ValueError, match=r"give judge= or metrics=, not both"):
        evaluate_query_engine(query_engine, [{"query": "q?"}], [recall()], judge=ScriptedJudge())
