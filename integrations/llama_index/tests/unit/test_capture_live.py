"""RecallCapture and the queries without a reference: scored live with the sufficiency metric
by default, off the query path, sampled, on a bounded queue that drops and counts."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.messages import BaseMessage
from llama_index.core import Document, VectorStoreIndex
from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import MockLLM
from llama_index.evaluation.ragrecall import RecallCapture

from ragrecall import ClaimCache, ContextRecall, RecallLogger
from ragrecall.adapters import sampled
from ragrecall.engines import Record
from ragrecall.sinks import CallableSink
from ragrecall.testing import ScriptedJudge, keyword_reply

Q = "Where is the Eiffel Tower?"
REF = "The Eiffel Tower is in Paris."
NEW = "When was the Eiffel Tower finished?"  # no reference


@pytest.fixture(scope="module")
def engine() -> BaseQueryEngine:
    documents = [
        Document(text="The Eiffel Tower is in Paris."),
        Document(text="The Eiffel Tower was finished in 1889."),
    ]
    index = VectorStoreIndex.from_documents(documents, embed_model=MockEmbedding(embed_dim=8))
    return index.as_query_engine(llm=MockLLM(), similarity_top_k=2)


def logger_of(judge: ScriptedJudge, seen: list[Record]) -> RecallLogger:
    metric = ContextRecall(judge, claims="sentences", cache=ClaimCache())
    return RecallLogger([metric], [CallableSink(seen.append)])


def gated(gate: threading.Event) -> ScriptedJudge:
    """A judge that answers only once ``gate`` is set."""

    def reply(messages: Sequence[BaseMessage]) -> Any:
        gate.wait(10)
        return keyword_reply(messages)

    return ScriptedJudge(reply=reply)


def test_a_query_without_a_reference_is_scored_for_sufficiency(engine: BaseQueryEngine) -> None:
    judge, seen = ScriptedJudge(), list[Record]()
    with logger_of(judge, seen) as logger, RecallCapture(logger, {Q: REF}) as capture:
        engine.query(Q)
        engine.query(NEW)
    (referenced,) = [r for r in seen if "no_reference" not in r.extra]
    (live,) = [r for r in seen if r.extra.get("no_reference")]
    assert referenced.query == Q and referenced.result.score == 1.0
    assert live.query == NEW and live.reference is None and live.sample.response
    assert live.extra == {"kind": "query", "no_reference": True, "metric": "sufficiency"}
    assert live.results["sufficiency"].status == "scored"
    assert live.run_id is not None and live.run_id.startswith("RetrieverQueryEngine.query-")
    assert sorted(c.text for c in live.chunks) == sorted(c.text for c in referenced.chunks)
    assert capture.submitted == 1 and capture.skipped == 1
    assert capture.live is not None
    stats = capture.live.stats
    assert (stats.offered, stats.sampled, stats.scored, stats.dropped, stats.pending) == (
        1,
        1,
        1,
        0,
        0,
    )
    assert stats.judge_calls >= 1 and stats.max_calls_per_minute == 60


def test_skip_scores_nothing_without_a_reference(engine: BaseQueryEngine) -> None:
    judge, seen = ScriptedJudge(), list[Record]()
    with (
        logger_of(judge, seen) as logger,
        RecallCapture(logger, {Q: REF}, no_reference="skip") as capture,
    ):
        engine.query(NEW)
    assert seen == [] and judge.calls == [] and capture.live is None
    assert capture.skipped == 1 and capture.submitted == 0


def test_the_query_never_waits_and_a_full_queue_drops_and_counts(
    engine: BaseQueryEngine,
) -> None:
    gate, seen = threading.Event(), list[Record]()
    logger = logger_of(gated(gate), seen)
    capture = RecallCapture(logger, {}, max_queue=2, max_calls_per_minute=None).attach()
    try:
        start = time.perf_counter()
        for i in range(20):
            engine.query(f"{NEW} ({i})")  # the judge is held back by the gate
        elapsed = time.perf_counter() - start
        assert seen == [] and elapsed < 10.0
        assert capture.live is not None
        stats = capture.live.stats
        assert stats.sampled == 20 and stats.dropped >= 20 - 2 - 1
    finally:
        gate.set()
        capture.close()
        logger.close()
    stats = capture.live.stats
    assert stats.scored == len(seen) == 20 - stats.dropped and stats.pending == 0
    assert capture.skipped == 20


def test_the_reference_is_looked_up_before_sampling(engine: BaseQueryEngine) -> None:
    out = next(f"{NEW} {i}" for i in range(100) if not sampled(f"{NEW} {i}", 0.5))
    kept = next(f"{NEW} {i}" for i in range(100) if sampled(f"{NEW} {i}", 0.5))
    judge, seen = ScriptedJudge(), list[Record]()
    with (
        logger_of(judge, seen) as logger,
        RecallCapture(logger, {}, sample_rate=0.5) as capture,
    ):
        engine.query(out)
        engine.query(kept)
    assert capture.skipped == 2 and capture.sampled_out == 0  # unreferenced: the live share
    assert capture.live is not None
    stats = capture.live.stats
    assert (stats.offered, stats.skipped_by_sampling, stats.scored) == (2, 1, 1)
    assert [(r.query, r.extra["sample_rate"]) for r in seen] == [(kept, 0.5)]


@pytest.mark.parametrize(
    ("options", "argument"),
    [
        ({"sample_rate": 1.5}, "sample_rate"),
        ({"max_calls_per_minute": 0}, "max_calls_per_minute"),
        ({"max_calls_per_minute": 2.5}, "max_calls_per_minute"),
        ({"max_queue": 0}, "max_queue"),
        ({"no_reference": "context_recall"}, "no_reference"),
        ({"no_reference": "nope"}, "no_reference"),
        ({"no_reference": None}, "no_reference"),
    ],
)
def test_bad_arguments_name_the_argument(options: dict[str, Any], argument: str) -> None:
    with logger_of(ScriptedJudge(), []) as logger, pytest.raises(ValueError, match=argument):
        RecallCapture(logger, {}, **options)
