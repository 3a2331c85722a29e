"""RecallCallbackHandler on real LCEL chains: one, two and nested retrievers."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.runnables import (
    Runnable,
    RunnableConfig,
    RunnableLambda,
    RunnableParallel,
    RunnablePassthrough,
)
from langchain_core.vectorstores import InMemoryVectorStore, VectorStoreRetriever
from langchain_ragrecall import RecallCallbackHandler, RecallRetriever

from ragrecall import ClaimCache, ContextRecall, RecallLogger, Sample, evaluate
from ragrecall.adapters import RETRIEVAL_QUERY, RETRIEVAL_STEP, explanation
from ragrecall.engines import Record
from ragrecall.sinks import CallableSink, RecallRecord
from ragrecall.testing import ScriptedJudge

Q = "Where is the Eiffel Tower?"


def recall(judge: Any = None) -> ContextRecall:
    return ContextRecall(judge or ScriptedJudge(), claims="sentences", cache=ClaimCache())


class RunNames(BaseCallbackHandler):
    """Run id -> name of every chain run (to check where the handler put things)."""

    def __init__(self) -> None:
        self.names: dict[uuid.UUID, str] = {}

    def on_chain_start(self, serialized: Any, inputs: Any, **kw: Any) -> None:
        self.names[kw["run_id"]] = kw.get("name") or ""


def pages(documents: list[Document] | None) -> list[str | None]:
    return [d.id for d in documents or []]


def test_captures_each_runs_query_and_documents(
    base_retriever: VectorStoreRetriever, make_chain: Any, questions: dict[str, str]
) -> None:
    handler = RecallCallbackHandler()
    chain = make_chain(base_retriever)
    roots = {q: uuid.uuid4() for q in questions}
    for query in questions:
        chain.invoke(query, config={"callbacks": [handler], "run_id": roots[query]})
    captured = handler.retrievals
    assert [r.query for r in captured] == list(questions)
    for r in captured:
        assert r.root_run_id == roots[r.query] and r.parent_run_id is not None
        assert pages(r.documents) == pages(base_retriever.invoke(r.query))
        assert handler.get(r.run_id) == r and r.name == "VectorStoreRetriever"
        assert handler.in_trace(roots[r.query]) == [r]
        assert handler.children(r.parent_run_id) == [r]  # type: ignore[arg-type]


def test_two_retrievers_and_one_in_a_sub_chain(
    store: InMemoryVectorStore, base_retriever: VectorStoreRetriever
) -> None:
    wide = store.as_retriever(search_kwargs={"k": 3}).with_config(run_name="wide")
    sub_chain = (RunnableLambda(lambda q: f"{q} Rome") | wide).with_config(run_name="sub")
    chain = RunnableParallel(
        narrow=base_retriever.with_config(run_name="narrow"),
        sub=sub_chain,
        question=RunnablePassthrough(),
    ) | RunnableLambda(lambda x: x)
    handler, names = RecallCallbackHandler(), RunNames()
    root = uuid.uuid4()
    out = chain.invoke(Q, config={"callbacks": [handler, names], "run_id": root})
    by_name = {r.name: r for r in handler.retrievals}
    assert set(by_name) == {"narrow", "wide"}
    narrow, wide_run = by_name["narrow"], by_name["wide"]
    assert pages(narrow.documents) == pages(out["narrow"])
    assert pages(wide_run.documents) == pages(out["sub"]) and len(out["sub"]) == 3
    assert wide_run.query == f"{Q} Rome"
    assert names.names[wide_run.parent_run_id] == "sub"  # type: ignore[index]
    assert names.names[narrow.parent_run_id].startswith("RunnableParallel")  # type: ignore[index]
    assert names.names[wide_run.parent_run_id] != narrow.parent_run_id  # type: ignore[index]
    assert narrow.root_run_id == wide_run.root_run_id == root


def test_score_captured_against_references(
    base_retriever: VectorStoreRetriever, make_chain: Any, questions: dict[str, str]
) -> None:
    handler = RecallCallbackHandler()
    chain = make_chain(base_retriever)
    for query in [*questions, "Is Big Ben a bell?"]:
        chain.invoke(query, config={"callbacks": [handler]})
    report = handler.score_captured(questions, metrics=[recall()])
    assert [s.user_input for s in report.samples] == list(questions)
    assert [r.score for r in report.results["context_recall"]] == [1.0, 1.0, 1.0]
    pairs = handler.captured_samples(questions)
    assert [run_id for run_id, _ in pairs] == [r.run_id for r in handler.retrievals[:3]]


def test_group_by_trace_merges_a_chains_retrievals(store: InMemoryVectorStore) -> None:
    first = store.as_retriever(search_kwargs={"k": 1})
    second = RunnableLambda(lambda q: "Colosseum gladiator fights") | first
    chain = RunnableParallel(a=first, b=second)
    handler = RecallCallbackHandler()
    root = uuid.uuid4()
    chain.invoke(Q, config={"callbacks": [handler], "run_id": root})
    reference = {Q: "The Eiffel Tower is in Paris. The Colosseum held gladiator fights."}
    per_retrieval = handler.captured_samples(reference)
    assert len(per_retrieval) == 1  # the second retriever's query has no reference
    ((key, sample),) = handler.captured_samples(reference, group_by="trace")
    assert key == root and [c.id for c in sample.retrieved_contexts] == ["eiffel", "gladiators"]
    (result,) = handler.score_captured(reference, [recall()], group_by="trace").results[
        "context_recall"
    ]
    assert result.score == 1.0


# An agent's three searches for one answer: the third finds "eiffel" again, and "cats".
SEARCHES = ["Eiffel Tower location", "Colosseum in Rome", "cats purr Eiffel"]
AGENT_REFERENCE = (
    "The Eiffel Tower is in Paris. Cats purr when they are content. Big Ben is a bell in London."
)
# (chunk, the step that first retrieved it): "eiffel" found again at step 3 keeps step 1
UNION = [("eiffel", 1), ("eiffel-1889", 1), ("colosseum", 2), ("gladiators", 2), ("cats", 3)]


def agent_of(retriever: VectorStoreRetriever, *, fail: bool = False) -> Runnable[str, str]:
    """A stand-in agent: searches three times in one run, then answers (or fails)."""

    def agent(question: str, config: RunnableConfig) -> str:
        found = [doc for query in SEARCHES for doc in retriever.invoke(query, config)]
        if fail:
            raise RuntimeError("the agent gave up")
        return " ".join(dict.fromkeys(doc.page_content for doc in found))

    return RunnableLambda(agent)


def agent_config(handler: RecallCallbackHandler, root: uuid.UUID) -> RunnableConfig:
    return {"callbacks": [handler], "run_id": root, "metadata": {"reference": AGENT_REFERENCE}}


def steps_of(sample: Sample) -> list[tuple[str, Any]]:
    return [(c.id, c.metadata.get(RETRIEVAL_STEP)) for c in sample.retrieved_contexts]


def test_an_agents_searches_make_one_sample_with_steps(
    base_retriever: VectorStoreRetriever, make_chain: Any
) -> None:
    handler, root = RecallCallbackHandler(), uuid.uuid4()
    agent_of(base_retriever).invoke("Tell me about Paris and cats.", agent_config(handler, root))
    assert [r.query for r in handler.in_trace(root)] == SEARCHES
    ((key, sample),) = handler.captured_samples(group_by="trace")
    assert key == root and steps_of(sample) == UNION
    assert [c.metadata[RETRIEVAL_QUERY] for c in sample.retrieved_contexts] == [
        SEARCHES[step - 1] for _, step in UNION
    ]
    (result,) = evaluate([sample], [recall()]).results["context_recall"]
    assert result.score == pytest.approx(2 / 3)
    lines = explanation(result, sample).splitlines()
    assert lines[1].endswith('retrieved at step 1 (query "Eiffel Tower location")')
    assert lines[2].endswith('retrieved at step 3 (query "cats purr Eiffel")')
    # per retrieval, and a trace of one retrieval: no steps, as before
    per_retrieval = handler.captured_samples()
    assert len(per_retrieval) == 3
    assert all(step is None for _, s in per_retrieval for _, step in steps_of(s))
    handler.clear()
    make_chain(base_retriever).invoke(Q, config=agent_config(handler, uuid.uuid4()))
    ((_, single),) = handler.captured_samples(group_by="trace")
    assert steps_of(single) == [("eiffel", None), ("eiffel-1889", None)]


def test_live_logging_by_trace_writes_one_record_per_agent_run(
    base_retriever: VectorStoreRetriever,
) -> None:
    seen: list[Record] = []
    root = uuid.uuid4()
    with RecallLogger([recall()], [CallableSink(seen.append)]) as logger:
        handler = RecallCallbackHandler(logger=logger, group_by="trace", no_reference="skip")
        agent_of(base_retriever).invoke(
            "Tell me about Paris and cats.", agent_config(handler, root)
        )
    (record,) = seen
    assert record.run_id == str(root) and record.reference == AGENT_REFERENCE
    assert record.extra["retrievers"] == ["VectorStoreRetriever"] * 3
    assert record.extra["retrieval_run_ids"] == [str(r.run_id) for r in handler.in_trace(root)]
    sample = Sample(user_input=record.query or "", retrieved_contexts=record.chunks)
    assert steps_of(sample) == UNION
    result = record.results["context_recall"]
    assert result.score == pytest.approx(2 / 3)
    assert 'retrieved at step 3 (query "cats purr Eiffel")' in explanation(result, sample)
    assert handler.no_reference == 0 and handler.failed_runs == 0


def test_live_logging_by_trace_submits_nothing_for_a_failed_run(
    base_retriever: VectorStoreRetriever,
) -> None:
    seen: list[Record] = []
    with RecallLogger([recall()], [CallableSink(seen.append)]) as logger:
        handler = RecallCallbackHandler(logger=logger, group_by="trace", no_reference="skip")
        with pytest.raises(RuntimeError, match="gave up"):
            agent_of(base_retriever, fail=True).invoke(
                "Tell me about Paris and cats.", agent_config(handler, uuid.uuid4())
            )
        assert handler.failed_runs == 1
        agent_of(base_retriever).invoke("Again.", config={"callbacks": [handler]})
        assert handler.no_reference == 1  # the run without a reference: counted once
    assert seen == [] and len(handler.retrievals) == 6
    handler.clear()
    assert handler.failed_runs == 0 and handler.no_reference == 0
    with pytest.raises(ValueError, match="group_by"):
        RecallCallbackHandler(group_by="answer")  # type: ignore[arg-type]


def test_a_wrapped_retriever_is_scored_once(
    base_retriever: VectorStoreRetriever, make_chain: Any
) -> None:
    handler = RecallCallbackHandler()
    with RecallRetriever(base_retriever, metrics=[recall()]) as wrapped:
        make_chain(wrapped).invoke(Q, config={"callbacks": [handler]})
    outer, inner = handler.retrievals
    assert not outer.nested and inner.nested and inner.parent_run_id == outer.run_id
    assert len(handler.captured_samples({Q: "The Eiffel Tower is in Paris."})) == 1


def test_live_logging_with_run_ids(
    base_retriever: VectorStoreRetriever, make_chain: Any, questions: dict[str, str]
) -> None:
    seen: list[RecallRecord] = []
    with RecallLogger([recall()], [CallableSink(seen.append)]) as logger:
        handler = RecallCallbackHandler(questions, logger=logger, no_reference="skip")
        chain = make_chain(base_retriever)
        chain.batch([*questions, "Is Big Ben a bell?"], config={"callbacks": [handler]})
    assert sorted(r.query or "" for r in seen) == sorted(questions)
    runs = {str(r.run_id): r for r in handler.retrievals}
    for record in seen:
        run = runs[record.run_id or ""]
        assert record.extra == {
            "parent_run_id": str(run.parent_run_id),
            "retriever": "VectorStoreRetriever",
        }
        assert [c.id for c in record.chunks] == pages(run.documents)
    assert handler.no_reference == 1


def test_reference_from_run_metadata(base_retriever: VectorStoreRetriever, make_chain: Any) -> None:
    handler = RecallCallbackHandler()
    make_chain(base_retriever).invoke(
        Q,
        config={"callbacks": [handler], "metadata": {"reference": "The Eiffel Tower is in Paris."}},
    )
    ((_, sample),) = handler.captured_samples()
    assert sample.reference == "The Eiffel Tower is in Paris."


def test_thread_safe_under_a_threaded_batch(
    base_retriever: VectorStoreRetriever, make_chain: Any
) -> None:
    handler = RecallCallbackHandler()
    queries = [f"Where is the Eiffel Tower? #{i}" for i in range(40)]
    make_chain(base_retriever).batch(queries, config={"callbacks": [handler], "max_concurrency": 8})
    captured = handler.retrievals
    assert sorted(r.query for r in captured) == sorted(queries)
    assert all(pages(r.documents) == pages(base_retriever.invoke(r.query)) for r in captured)
    assert len({r.root_run_id for r in captured}) == 40


async def test_async_chain(
    base_retriever: VectorStoreRetriever, make_chain: Any, questions: dict[str, str]
) -> None:
    handler = RecallCallbackHandler()
    await make_chain(base_retriever).abatch(list(questions), config={"callbacks": [handler]})
    assert sorted(r.query for r in handler.retrievals) == sorted(questions)
    assert all(r.finished for r in handler.retrievals)


def test_failing_retriever_is_recorded_and_the_error_propagates(make_chain: Any) -> None:
    def broken(query: str) -> list[Document]:
        raise RuntimeError("index offline")

    class Broken(VectorStoreRetriever):
        def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Document]:
            return broken(query)

    handler = RecallCallbackHandler()
    retriever = Broken(vectorstore=InMemoryVectorStore(embedding=None))  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="index offline"):
        make_chain(retriever).invoke(Q, config={"callbacks": [handler]})
    (run,) = handler.retrievals
    assert not run.finished and "index offline" in (run.error or "")
    assert handler.captured_samples({Q: "x"}) == []


def test_handler_failures_never_break_the_run(
    base_retriever: VectorStoreRetriever, make_chain: Any
) -> None:
    logger = RecallLogger([recall()], [])
    logger.close()  # submitting now raises inside the handler
    handler = RecallCallbackHandler({Q: "The Eiffel Tower is in Paris."}, logger=logger)
    assert handler.raise_error is False
    assert make_chain(base_retriever).invoke(Q, config={"callbacks": [handler]})
    assert handler.retrievals[0].finished


def test_clear(base_retriever: VectorStoreRetriever) -> None:
    handler = RecallCallbackHandler()
    base_retriever.invoke(Q, config={"callbacks": [handler]})
    (run,) = handler.retrievals
    assert run.parent_run_id is None and run.root_run_id == run.run_id
    handler.clear()
    assert handler.retrievals == []
