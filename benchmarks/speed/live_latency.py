"""What live scoring of retrievals without a reference costs a LangChain chain's latency.

    python -m benchmarks.speed.live_latency [--queries 400] [--judge-ms 20] [--max-queue 50]

One run, three chains over the same ``InMemoryVectorStore`` (``DeterministicFakeEmbedding``,
200 documents, k=4), called in turn for each query so all three see the same load:

* ``plain``: the vector store's retriever, unwrapped;
* ``wrapped``: ``RecallRetriever`` with the default ``no_reference="sufficiency"``: none of
  the queries has a reference, so each is offered to the live scorer, whose judge (scripted,
  sleeping ``--judge-ms`` a call) scores it on its own thread, with no call budget
  (``--max-calls-per-minute``, none by default: the worker runs all the time, the worst case
  for contention) and a queue of ``--max-queue`` that drops and counts;
* ``inline``: the control, the same retriever with ``Sufficiency`` scored on the request path,
  as a blocking design would: it shows that the bound below catches a judge call.

Prints p50 and p99 of each chain's wall time per query, the live scorer's counts, the load
average at start and end, and whether ``wrapped`` and ``inline`` are within the system test's
bound (``integrations/langchain/tests/system/test_live_scoring.py``): p99 <= max(2 x plain's
p99, plain's p99 + 10 ms). Asserts nothing. The claim store goes to a temporary directory
(``RAGRECALL_CACHE_DIR``) unless it is set.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from typing import Any


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=400, help="queries, each through all 3")
    parser.add_argument("--judge-ms", type=float, default=20.0, help="the judge's sleep a call")
    parser.add_argument("--max-queue", type=int, default=50, help="the live scorer's queue")
    parser.add_argument(
        "--max-calls-per-minute", type=int, default=None, help="the live budget (default none)"
    )
    return parser.parse_args()


def quantile(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100)[q - 1]


def main() -> None:
    args = parse()
    os.environ.setdefault("RAGRECALL_CACHE_DIR", tempfile.mkdtemp(prefix="live-latency-"))
    load_start = os.getloadavg()

    from langchain_core.documents import Document
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_core.runnables import Runnable, RunnableLambda, RunnablePassthrough
    from langchain_core.vectorstores import InMemoryVectorStore
    from langchain_ragrecall import RecallRetriever

    from ragrecall import ClaimCache, ContextRecall, Sample, Sufficiency
    from ragrecall.testing import ScriptedJudge, keyword_reply

    def sleepy() -> ScriptedJudge:
        def reply(messages: Any) -> Any:
            time.sleep(args.judge_ms / 1000)
            return keyword_reply(messages)

        return ScriptedJudge(reply=reply)

    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=64))
    texts = [f"Fact {i}: topic {i % 37} holds the value {i * 7}." for i in range(200)]
    store.add_documents([Document(t, id=f"d{i}") for i, t in enumerate(texts)])
    base = store.as_retriever(search_kwargs={"k": 4})

    wrapped = RecallRetriever(
        base,
        metrics=[ContextRecall(sleepy(), claims="sentences", cache=ClaimCache())],
        max_queue=args.max_queue,
        max_calls_per_minute=args.max_calls_per_minute,
        keep=20,
    )
    blocking = Sufficiency(sleepy(), cache=ClaimCache())

    def inline(query: str) -> list[Document]:
        documents = base.invoke(query)
        contexts = [d.page_content for d in documents]
        blocking.score(Sample(user_input=query, retrieved_contexts=contexts))
        return documents

    def chain(retriever: Runnable[str, list[Document]]) -> Runnable[str, str]:
        def stitch(inputs: dict[str, Any]) -> str:
            return " ".join(d.page_content for d in inputs["context"])

        return {"context": retriever, "question": RunnablePassthrough()} | RunnableLambda(stitch)

    chains = {
        "plain": chain(base),
        "wrapped": chain(wrapped),
        "inline": chain(RunnableLambda(inline)),
    }
    queries = [f"What is fact number {i} about topic {i % 37}?" for i in range(args.queries)]
    for q in [f"warm-up {i}?" for i in range(20)]:
        for c in chains.values():
            c.invoke(q)
    times: dict[str, list[float]] = {name: [] for name in chains}
    started = time.perf_counter()
    for i, q in enumerate(queries):
        order = list(chains) if i % 2 == 0 else list(reversed(chains))  # alternate who goes first
        for name in order:
            t0 = time.perf_counter()
            chains[name].invoke(q)
            times[name].append(time.perf_counter() - t0)
    elapsed = time.perf_counter() - started
    live = wrapped.live
    wrapped.close()
    load_end = os.getloadavg()

    print(f"load average at start: {load_start[0]:.2f} {load_start[1]:.2f} {load_start[2]:.2f}")
    print(
        f"{args.queries} queries (+20 warm-up) through each chain, judge {args.judge_ms:g} ms "
        f"a call, max_queue {args.max_queue}, max_calls_per_minute "
        f"{args.max_calls_per_minute}; {elapsed:.1f} s"
    )
    plain99 = quantile(times["plain"], 99)
    bound = max(2 * plain99, plain99 + 0.010)
    for name, values in times.items():
        p50, p99 = quantile(values, 50), quantile(values, 99)
        verdict = "" if name == "plain" else ("  within" if p99 <= bound else "  OUTSIDE")
        print(f"{name:8} p50 {p50 * 1e3:7.2f} ms  p99 {p99 * 1e3:7.2f} ms{verdict}")
    print(f"bound: p99 <= {bound * 1e3:.2f} ms (max(2 x plain p99, plain p99 + 10 ms))")
    if live is not None:
        s = live.stats
        print(
            f"live scorer: offered {s.offered}, sampled {s.sampled}, scored {s.scored}, "
            f"dropped {s.dropped}, abandoned {s.abandoned}, unscorable {s.unscorable}, "
            f"judge calls {s.judge_calls}"
        )
    print(f"load average at end: {load_end[0]:.2f} {load_end[1]:.2f} {load_end[2]:.2f}")


if __name__ == "__main__":
    main()
