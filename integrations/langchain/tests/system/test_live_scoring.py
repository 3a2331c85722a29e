"""Live scoring of 1,000 retrievals without a reference, through a real LCEL chain over a real
vector store, with a judge that sleeps 20 ms a call and so falls behind: the retrieval's p99
latency is the unwrapped chain's within noise, the sampling keeps its rate, memory stays
bounded, and every retrieval is counted once (scored, dropped or skipped)."""

from __future__ import annotations

import math
import statistics
import time
import tracemalloc
from collections.abc import Sequence
from typing import Any

from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable, RunnableLambda, RunnablePassthrough
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_ragrecall import RecallRetriever

from ragrecall import ClaimCache, ContextRecall
from ragrecall.testing import ScriptedJudge, keyword_reply

N, RATE, JUDGE_S = 1000, 0.5, 0.02
QUERIES = [f"What is fact number {i} about topic {i % 37}?" for i in range(N)]


def sleepy(seconds: float) -> ScriptedJudge:
    def reply(messages: Sequence[BaseMessage]) -> Any:
        time.sleep(seconds)
        return keyword_reply(messages)

    return ScriptedJudge(reply=reply)


def store() -> InMemoryVectorStore:
    vectors = InMemoryVectorStore(DeterministicFakeEmbedding(size=64))
    texts = [f"Fact {i}: topic {i % 37} holds the value {i * 7}." for i in range(200)]
    vectors.add_documents([Document(t, id=f"d{i}") for i, t in enumerate(texts)])
    return vectors


def chain(retriever: Runnable[str, list[Document]]) -> Runnable[str, str]:
    def stitch(inputs: dict[str, Any]) -> str:
        return " ".join(d.page_content for d in inputs["context"])

    return {"context": retriever, "question": RunnablePassthrough()} | RunnableLambda(stitch)


def wrapped(base: Any, **options: Any) -> RecallRetriever:
    judge = sleepy(JUDGE_S)
    metric = ContextRecall(judge, claims="sentences", cache=ClaimCache())
    options = {"sample_rate": RATE, "max_queue": 20, "keep": 20, **options}
    return RecallRetriever(base, metrics=[metric], **options)


def p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100)[98]


def test_retrieval_latency_sampling_and_counts_with_a_judge_that_falls_behind() -> None:
    base = store().as_retriever(search_kwargs={"k": 4})
    recall = wrapped(base, max_calls_per_minute=6000)
    plain_chain, recall_chain = chain(base), chain(recall)
    for q in QUERIES[:20]:  # warm both paths
        plain_chain.invoke(q)
        recall_chain.invoke(q)
    plain: list[float] = []
    live: list[float] = []
    for q in QUERIES:  # side by side, alternating, so both see the same load
        start = time.perf_counter()
        plain_chain.invoke(q)
        plain.append(time.perf_counter() - start)
        start = time.perf_counter()
        recall_chain.invoke(q)
        live.append(time.perf_counter() - start)
    scorer = recall.live
    assert scorer is not None
    recall.close()
    stats = scorer.stats
    offered = N + 20

    # A put on the request path, never a wait for the judge (a blocking put would add at
    # least one 20 ms judge call to every retrieval once the queue is full).
    bound = max(2 * p99(plain), p99(plain) + 0.010)
    print(f"p99 plain {p99(plain) * 1e3:.2f} ms, wrapped {p99(live) * 1e3:.2f} ms")
    assert p99(live) <= bound

    # The sampling keeps its rate: within the 99.9 % binomial interval.
    half = 3.29 * math.sqrt(offered * RATE * (1 - RATE))
    assert abs(stats.sampled - offered * RATE) <= half

    # Every retrieval counted once; the judge fell behind, so some were dropped.
    assert stats.offered == offered == recall.stats.no_reference
    assert stats.skipped_by_sampling + stats.sampled == offered
    done = stats.scored + stats.unscorable + stats.dropped + stats.abandoned
    assert done == stats.sampled and stats.pending == 0
    assert stats.dropped > 0 and stats.scored > 0 and stats.unscorable == 0
    written = [r for r in recall.records if r.extra.get("no_reference")]
    assert len(written) == min(20, stats.scored)
    assert {r.extra["metric"] for r in written} == {"sufficiency"}


def growth(queries: list[str]) -> int:
    """The traced memory's peak over its start while ``queries`` go through a wrapped chain
    whose judge falls behind."""
    base = store().as_retriever(search_kwargs={"k": 4})
    recall = wrapped(base, max_calls_per_minute=None)
    recall_chain = chain(recall)
    tracemalloc.start()
    try:
        start, _ = tracemalloc.get_traced_memory()
        for q in queries:
            recall_chain.invoke(q)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        recall.close()
    return peak - start


def test_memory_stays_bounded_while_the_judge_falls_behind() -> None:
    small, large = growth(QUERIES[:200]), growth(QUERIES)
    print(f"peak growth: {small / 1e6:.2f} MB for 200 queries, {large / 1e6:.2f} MB for {N}")
    assert large < 8_000_000  # a bounded queue of 20, the last 20 records, the judge's prompts
    assert large < 2 * small + 2_000_000  # five times the queries: not five times the memory
