"""Real LangChain parts for the tests: an in-memory vector store on the offline hashing
embedding, its retriever, and an LCEL RAG chain whose "LLM" stitches the retrieved text."""

from __future__ import annotations

from typing import Any

import pytest
from hashing_embeddings import HashingEmbeddings
from langchain_core.documents import Document
from langchain_core.runnables import Runnable, RunnableLambda, RunnablePassthrough
from langchain_core.vectorstores import InMemoryVectorStore, VectorStoreRetriever

# Each says more than the reference's sentence it supports, so the judge is asked (a sentence
# a document states word for word is supported without a judge call).
DOCUMENTS = [
    Document(
        "The Eiffel Tower is in Paris, France.", id="eiffel", metadata={"source": "paris.txt"}
    ),
    Document("The Eiffel Tower was finished in 1889, for a fair.", id="eiffel-1889"),
    Document("The Colosseum is in Rome.", id="colosseum", metadata={"source": "rome.txt"}),
    Document("The Colosseum held gladiator fights, long ago.", id="gladiators"),
    Document("Big Ben is a bell in London.", id="big-ben"),
    Document("Cats purr when they are content, mostly.", id="cats"),
]

QUESTIONS = {
    "Where is the Eiffel Tower?": (
        "The Eiffel Tower is in Paris. The Eiffel Tower was finished in 1889."
    ),
    "What happened in the Colosseum?": "The Colosseum held gladiator fights.",
    "Do cats purr?": "Cats purr when they are content.",
}


@pytest.fixture(scope="session")
def store() -> InMemoryVectorStore:
    vectors = InMemoryVectorStore(HashingEmbeddings())
    vectors.add_documents(DOCUMENTS)
    return vectors


@pytest.fixture
def base_retriever(store: InMemoryVectorStore) -> VectorStoreRetriever:
    return store.as_retriever(search_kwargs={"k": 2})


@pytest.fixture
def questions() -> dict[str, str]:
    """Question -> reference."""
    return dict(QUESTIONS)


@pytest.fixture
def make_chain() -> Any:
    """``make_chain(retriever)``: a RAG chain over that retriever."""
    return rag_chain


def stitch(inputs: dict[str, Any]) -> str:
    """A stand-in LLM: answers with the retrieved text."""
    return " ".join(doc.page_content for doc in inputs["context"])


def rag_chain(retriever: Runnable[str, list[Document]]) -> Runnable[str, str]:
    """``{"context": retriever, "question": passthrough} | llm``."""
    chain: Runnable[str, str] = {
        "context": retriever,
        "question": RunnablePassthrough(),
    } | RunnableLambda(stitch)
    return chain
