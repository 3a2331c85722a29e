"""LangChain's own conformance suite for retrievers, run on RecallRetriever around a real
in-memory vector store (offline: the hashing embedding, and no reference, so no judge call)."""

from __future__ import annotations

from typing import Any

import pytest
from hashing_embeddings import HashingEmbeddings
from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import ConfigurableField, RunnableLambda
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_ragrecall import RecallRetriever, retrieve_samples
from langchain_tests.integration_tests import RetrieversIntegrationTests
from pydantic import ValidationError


def _store() -> InMemoryVectorStore:
    store = InMemoryVectorStore(HashingEmbeddings())
    texts = ["The Eiffel Tower is in Paris.", "The Eiffel Tower was finished in 1889."]
    texts += ["The Eiffel Tower is 330 metres tall.", "The Colosseum is in Rome."]
    store.add_documents([Document(text, id=f"d{i}") for i, text in enumerate(texts)])
    return store


class TestRecallRetrieverStandard(RetrieversIntegrationTests):
    @property
    def retriever_constructor(self) -> type[RecallRetriever]:
        return RecallRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        retriever = _store().as_retriever(search_kwargs={"k": 4})
        return {"retriever": retriever, "no_reference": "skip"}  # no judge started

    @property
    def retriever_query_example(self) -> str:
        return "Where is the Eiffel Tower?"


def test_the_callers_config_reaches_the_wrapped_retriever() -> None:
    inner = (
        _store()
        .as_retriever(search_kwargs={"k": 1})
        .configurable_fields(search_kwargs=ConfigurableField(id="search_kwargs"))
    )
    config = {"configurable": {"search_kwargs": {"k": 3}}}
    assert len(inner.invoke("Eiffel Tower", config=config)) == 3
    with RecallRetriever(inner, no_reference="skip") as wrapped:
        assert len(wrapped.invoke("Eiffel Tower", config=config)) == 3
        assert len(wrapped.invoke("Eiffel Tower")) == 1


async def test_the_callers_config_reaches_the_wrapped_retriever_async() -> None:
    inner = (
        _store()
        .as_retriever(search_kwargs={"k": 1})
        .configurable_fields(search_kwargs=ConfigurableField(id="search_kwargs"))
    )
    with RecallRetriever(inner, no_reference="skip") as wrapped:
        config = {"configurable": {"search_kwargs": {"k": 2}}}
        assert len(await wrapped.ainvoke("Eiffel Tower", config=config)) == 2


@pytest.mark.parametrize("keyword", ["top_k", "inlline", "sink"])
def test_unknown_constructor_keywords_are_refused(keyword: str) -> None:
    with pytest.raises(ValidationError, match=keyword):
        RecallRetriever(_store().as_retriever(), **{keyword: 3})


def test_k_is_set_on_a_copy_of_the_wrapped_retriever() -> None:
    inner = _store().as_retriever(search_kwargs={"k": 4, "filter": None})
    with RecallRetriever(inner, k=2, no_reference="skip") as wrapped:
        assert len(wrapped.invoke("Eiffel Tower")) == 2
        assert wrapped.k == 2
        assert wrapped.retriever.search_kwargs == {"k": 2, "filter": None}  # type: ignore[attr-defined]
    assert inner.search_kwargs == {"k": 4, "filter": None}  # the caller's retriever, unchanged


def test_k_sets_a_retrievers_own_k_field() -> None:
    class Firsts(BaseRetriever):
        k: int = 4

        def _get_relevant_documents(
            self, query: str, *, run_manager: CallbackManagerForRetrieverRun
        ) -> list[Document]:
            return [Document(f"doc {i}") for i in range(self.k)]

    inner = Firsts()
    with RecallRetriever(inner, k=1, no_reference="skip") as wrapped:
        assert len(wrapped.invoke("anything")) == 1
    assert inner.k == 4


def test_k_is_refused_where_the_wrapped_retriever_has_no_such_setting() -> None:
    inner = RunnableLambda(lambda query: [Document(query)])
    with pytest.raises(ValidationError, match="neither a `k` field nor `search_kwargs`"):
        RecallRetriever(inner, k=3)
    with pytest.raises(ValidationError, match="greater than or equal to 1"):
        RecallRetriever(_store().as_retriever(), k=0)


def test_a_datasets_questions_through_a_retriever() -> None:
    tasks = [
        {"sample_id": "q1", "question": "Where is the Eiffel Tower?", "ground_truth": "In Paris."},
        {"sample_id": "q2", "question": "Where is the Colosseum?", "ground_truth": "In Rome."},
    ]
    retriever = _store().as_retriever(search_kwargs={"k": 2})
    samples = retrieve_samples(retriever, tasks)
    assert [s.sample_id for s in samples] == ["q1", "q2"]
    assert samples[0].retrieved_contexts[0].id == "d0" and samples[0].reference == "In Paris."
    assert [c.rank for c in samples[1].retrieved_contexts] == [1, 2]
    with pytest.raises(ValueError, match="no question"):
        retrieve_samples(retriever, [{"reference": "x"}])
