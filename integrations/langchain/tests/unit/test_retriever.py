"""RecallRetriever over a real vector-store retriever, scored by a scripted judge."""

from __future__ import annotations

import json
import statistics
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.messages import BaseMessage
from langchain_core.vectorstores import VectorStoreRetriever
from langchain_ragrecall import RecallCallbackHandler, RecallRetriever

from ragrecall import ClaimCache, ContextRecall, RecallLogger, Sample
from ragrecall.sinks import JsonlSink, RecallRecord, SQLiteSink
from ragrecall.testing import ScriptedJudge, keyword_reply

Q = "Where is the Eiffel Tower?"
REF = "The Eiffel Tower is in Paris. The Eiffel Tower was finished in 1889."


def recall(judge: Any = None) -> ContextRecall:
    return ContextRecall(judge or ScriptedJudge(), claims="sentences", cache=ClaimCache())


def gated(gate: threading.Event) -> ScriptedJudge:
    """A judge that answers only once ``gate`` is set."""

    def reply(messages: Sequence[BaseMessage]) -> Any:
        gate.wait(10)
        return keyword_reply(messages)

    return ScriptedJudge(reply=reply)


def slow(seconds: float, done: threading.Event) -> ScriptedJudge:
    """A judge taking ``seconds`` a call until ``done`` is set."""

    def reply(messages: Sequence[BaseMessage]) -> Any:
        done.wait(seconds)
        return keyword_reply(messages)

    return ScriptedJudge(reply=reply)


def ids(documents: list[Document]) -> list[tuple[str | None, str, dict[str, Any]]]:
    return [(d.id, d.page_content, d.metadata) for d in documents]


def test_returns_the_wrapped_retrievers_documents_unchanged(
    base_retriever: VectorStoreRetriever, questions: dict[str, str]
) -> None:
    with RecallRetriever(base_retriever, questions, metrics=[recall()]) as retriever:
        for query in [*questions, "Is Big Ben a bell?", "nothing matches this"]:
            assert ids(retriever.invoke(query)) == ids(base_retriever.invoke(query))


async def test_async_returns_the_same_documents_and_scores(
    base_retriever: VectorStoreRetriever, questions: dict[str, str]
) -> None:
    with RecallRetriever(base_retriever, questions, metrics=[recall()]) as retriever:
        for query in questions:
            got = await retriever.ainvoke(query)
            assert ids(got) == ids(await base_retriever.ainvoke(query))
    assert sorted(r.query or "" for r in retriever.records) == sorted(questions)


def test_each_scored_query_writes_one_record_with_the_retriever_run_id(
    base_retriever: VectorStoreRetriever, questions: dict[str, str], tmp_path: Path
) -> None:
    handler = RecallCallbackHandler()
    sinks = [JsonlSink(tmp_path / "recall.jsonl"), SQLiteSink(tmp_path / "recall.sqlite")]
    with RecallRetriever(
        base_retriever, questions, metrics=[recall()], sinks=sinks, no_reference="skip"
    ) as retriever:
        for query in questions:
            retriever.invoke(query, config={"callbacks": [handler]})
        retriever.invoke("Is Big Ben a bell?", config={"callbacks": [handler]})  # no reference
    lines = (tmp_path / "recall.jsonl").read_text().splitlines()
    records = [RecallRecord.model_validate(json.loads(line)) for line in lines]
    assert len(records) == 3 and len(SQLiteSink(tmp_path / "recall.sqlite").records()) == 3
    outer = {str(r.run_id): r for r in handler.retrievals if not r.nested}
    for record in records:
        run = outer[record.run_id or ""]
        assert record.query == run.query and record.reference == questions[run.query]
        assert [c.id for c in record.chunks] == [d.id for d in run.documents or []]
        assert record.extra == {"parent_run_id": None, "retriever": "VectorStoreRetriever"}
        assert record.result.status == "scored"
    assert retriever.stats.retrievals == 4 and retriever.stats.no_reference == 1
    assert retriever.stats.submitted == 3


def test_chunks_carry_ids_ranks_text_and_metadata(base_retriever: VectorStoreRetriever) -> None:
    with RecallRetriever(base_retriever, {Q: REF}, metrics=[recall()]) as retriever:
        retriever.invoke(Q)
    (record,) = retriever.records
    assert [(c.id, c.rank) for c in record.chunks] == [("eiffel", 1), ("eiffel-1889", 2)]
    assert record.chunks[0].text == "The Eiffel Tower is in Paris, France."
    assert record.chunks[0].metadata == {"source": "paris.txt"}
    assert record.result.score == 1.0


def test_inside_a_rag_chain_the_record_names_the_parent_run(
    base_retriever: VectorStoreRetriever, questions: dict[str, str], make_chain: Any
) -> None:
    handler = RecallCallbackHandler()
    retriever = RecallRetriever(base_retriever, questions, metrics=[recall()])
    chain = make_chain(retriever)
    with retriever:
        answer = chain.invoke(Q, config={"callbacks": [handler]})
    assert answer == (
        "The Eiffel Tower is in Paris, France. The Eiffel Tower was finished in 1889, for a fair."
    )
    (record,) = retriever.records
    (run,) = [r for r in handler.retrievals if not r.nested]
    assert record.run_id == str(run.run_id)
    assert record.extra["parent_run_id"] == str(run.parent_run_id) is not None


@pytest.mark.parametrize(
    "references",
    [
        {Q: REF},
        {"  where is the EIFFEL tower? ": REF},  # whitespace- and case-insensitive
        [{"question": Q, "ground_truth": REF}],
        [Sample(user_input=Q, reference=REF)],
        lambda query: REF if query == Q else None,
        {Q: {"reference_claims": ["The Eiffel Tower is in Paris."]}},
    ],
    ids=["mapping", "loose-key", "dicts", "samples", "callable", "claims"],
)
def test_reference_sources(base_retriever: VectorStoreRetriever, references: Any) -> None:
    with RecallRetriever(base_retriever, references, metrics=[recall()]) as retriever:
        retriever.invoke(Q)
        retriever.invoke("Do cats purr?")
    (referenced,) = [r for r in retriever.records if "no_reference" not in r.extra]
    assert referenced.query == Q and referenced.result.score == 1.0
    assert retriever.stats.no_reference == 1  # scored live, by default, without a reference
    (live,) = [r for r in retriever.records if r.extra.get("no_reference")]
    assert live.query == "Do cats purr?" and live.reference is None


def test_reference_from_config_metadata_wins(
    base_retriever: VectorStoreRetriever, make_chain: Any
) -> None:
    retriever = RecallRetriever(base_retriever, {Q: "Big Ben is a bell."}, metrics=[recall()])
    with retriever:
        retriever.invoke(Q, config={"metadata": {"reference": REF}})
        make_chain(retriever).invoke(
            "Do cats purr?", config={"metadata": {"reference": "Cats purr."}}
        )
        retriever.invoke(Q)
    scores = [(r.query, r.reference, r.result.score) for r in retriever.records]
    assert scores == [
        (Q, REF, 1.0),
        ("Do cats purr?", "Cats purr.", 1.0),
        (Q, "Big Ben is a bell.", 0.0),
    ]


def test_no_reference_skip_scores_nothing(base_retriever: VectorStoreRetriever) -> None:
    judge = ScriptedJudge()
    with RecallRetriever(base_retriever, metrics=[recall(judge)], no_reference="skip") as retriever:
        retriever.invoke(Q)
    assert retriever.records == [] and judge.calls == []
    assert retriever.stats.no_reference == 1 and retriever.stats.submitted == 0


def test_failing_judge_writes_an_unscorable_record(
    base_retriever: VectorStoreRetriever, tmp_path: Path
) -> None:
    judge = ScriptedJudge(reply=lambda m: ValueError("judge down"))
    sink = JsonlSink(tmp_path / "r.jsonl")
    with RecallRetriever(base_retriever, {Q: REF}, metrics=[recall(judge)], sinks=[sink]) as r:
        assert len(r.invoke(Q)) == 2
    (line,) = (tmp_path / "r.jsonl").read_text().splitlines()
    record = RecallRecord.model_validate_json(line)
    assert record.result.status == "unscorable" and record.result.score is None
    assert "judge down" in record.result.reason
    assert r.logger.stats.unscorable == 1


def test_scoring_is_off_the_retrieval_path_and_flush_waits(
    base_retriever: VectorStoreRetriever, questions: dict[str, str]
) -> None:
    gate = threading.Event()
    retriever = RecallRetriever(base_retriever, questions, metrics=[recall(gated(gate))])
    for query in questions:
        retriever.invoke(query)
    assert retriever.records == []  # the judge is still waiting: nothing scored yet
    gate.set()
    retriever.flush()
    assert len(retriever.records) == 3
    assert retriever.logger.stats.submitted == 3 and retriever.logger.stats.written == 3
    retriever.close()


def test_inline_scores_before_returning(base_retriever: VectorStoreRetriever) -> None:
    retriever = RecallRetriever(base_retriever, {Q: REF}, metrics=[recall()], inline=True)
    retriever.invoke(Q)
    assert [r.result.score for r in retriever.records] == [1.0]


async def test_async_inline_scores_before_returning(
    base_retriever: VectorStoreRetriever,
) -> None:
    retriever = RecallRetriever(base_retriever, {Q: REF}, metrics=[recall()], inline=True)
    await retriever.ainvoke(Q)
    assert [r.result.score for r in retriever.records] == [1.0]


def test_full_queue_drops_and_counts(base_retriever: VectorStoreRetriever) -> None:
    gate = threading.Event()
    retriever = RecallRetriever(
        base_retriever, {Q: REF}, metrics=[recall(gated(gate))], max_queue=1
    )
    for _ in range(5):
        assert len(retriever.invoke(Q)) == 2
    gate.set()
    retriever.close()
    stats = retriever.logger.stats
    assert stats.dropped >= 1 and stats.written + stats.dropped == 5
    assert len(retriever.records) == stats.written


def test_a_given_logger_is_flushed_not_closed(base_retriever: VectorStoreRetriever) -> None:
    seen: list[RecallRecord] = []
    from ragrecall.sinks import CallableSink

    logger = RecallLogger([recall()], [CallableSink(seen.append)])
    with RecallRetriever(base_retriever, {Q: REF}, logger=logger) as retriever:
        retriever.invoke(Q)
    assert len(seen) == 1
    logger.submit({"question": Q, "reference": REF, "contexts": ["x"]})  # still open
    logger.close()
    assert len(seen) == 2


def test_a_scoring_failure_never_breaks_retrieval(base_retriever: VectorStoreRetriever) -> None:
    retriever = RecallRetriever(base_retriever, {Q: REF}, metrics=[recall()])
    retriever.close()
    assert ids(retriever.invoke(Q)) == ids(base_retriever.invoke(Q))  # the logger is closed
    assert retriever.stats.errors == 1


def test_child_callbacks_see_the_wrapped_retriever(base_retriever: VectorStoreRetriever) -> None:
    events: list[tuple[str, Any, Any]] = []

    class Spy(BaseCallbackHandler):
        def on_retriever_start(self, serialized: Any, query: str, **kw: Any) -> None:
            events.append(("start", kw["run_id"], kw.get("parent_run_id")))

    with RecallRetriever(base_retriever, metrics=[recall()]) as retriever:
        retriever.invoke(Q, config={"callbacks": [Spy()]})
    (outer, inner) = events
    assert inner[2] == outer[1]  # the wrapped retriever runs as a child of the wrapper


def test_latency_overhead_with_a_slow_judge(
    base_retriever: VectorStoreRetriever, questions: dict[str, str]
) -> None:
    """Scoring takes 0.2 s a judge call; retrieval must not notice (figure printed)."""
    queries = list(questions) * 10
    done = threading.Event()
    retriever = RecallRetriever(base_retriever, questions, metrics=[recall(slow(0.2, done))])
    for query in queries[:3]:  # warm up both paths
        base_retriever.invoke(query)
        retriever.invoke(query)

    plain: list[float] = []
    wrapped: list[float] = []
    for query in queries:  # interleaved, so both see the same machine load
        for target, times in ((base_retriever, plain), (retriever, wrapped)):
            start = time.perf_counter()
            target.invoke(query)
            times.append(time.perf_counter() - start)
    base, wrap = statistics.median(plain), statistics.median(wrapped)
    mean_overhead = statistics.fmean(wrapped) - statistics.fmean(plain)
    print(
        f"\nretrieval latency (median of {len(queries)}): plain {base * 1e3:.2f} ms, "
        f"wrapped {wrap * 1e3:.2f} ms, overhead {(wrap - base) * 1e3:.2f} ms "
        f"(mean {mean_overhead * 1e3:.2f} ms; judge call 200 ms, scoring in the background)"
    )
    assert retriever.stats.submitted == len(queries) + 3
    assert len(retriever.records) < retriever.stats.submitted  # scoring still under way
    done.set()
    retriever.close()
    assert len(retriever.records) == retriever.stats.submitted


def test_sample_rate_scores_the_same_queries_every_run(
    base_retriever: VectorStoreRetriever, questions: dict[str, str]
) -> None:
    from ragrecall.adapters import sampled

    queries = [f"{q} ({i})" for q in questions for i in range(20)]
    references = {q: REF for q in queries}
    runs = []
    for _ in range(2):
        with RecallRetriever(
            base_retriever, references, metrics=[recall()], sample_rate=0.3, inline=True
        ) as retriever:
            for q in queries:
                retriever.invoke(q)
        runs.append(sorted(r.query or "" for r in retriever.records))
        assert retriever.stats.sampled_out == len(queries) - len(runs[-1])
        assert retriever.stats.sample_rate == 0.3
        assert {r.extra["sample_rate"] for r in retriever.records} == {0.3}
    assert runs[0] == runs[1] == sorted(q for q in queries if sampled(q, 0.3))
    assert 0 < len(runs[0]) < len(queries)
