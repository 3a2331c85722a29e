"""Offline parts for the tests: ragrecall's scripted judge (``ragrecall.testing``: a claim is
supported by the first passage holding all its words), and a real in-memory vector store on
langchain-ragrecall's hashing embedding."""

from __future__ import annotations

import pytest
from fakes import keyword_and_relevance
from hashing_embeddings import HashingEmbeddings
from langchain_core.documents import Document
from langchain_core.vectorstores import InMemoryVectorStore

from ragrecall.testing import ScriptedJudge

DOCUMENTS = [
    Document("The Eiffel Tower is in Paris.", id="eiffel", metadata={"source": "paris.txt"}),
    Document("The Eiffel Tower was finished in 1889.", id="eiffel-1889"),
    Document("The Colosseum is in Rome.", id="colosseum"),
    Document("Cats purr when they are content.", id="cats"),
]


@pytest.fixture
def judge() -> ScriptedJudge:
    """ragrecall's scripted judge (``ragrecall.testing``): word inclusion, no model."""
    return ScriptedJudge(reply=keyword_and_relevance)


@pytest.fixture
def failing_judge() -> ScriptedJudge:
    """A judge that is down: every call raises."""
    return ScriptedJudge(reply=lambda messages: ConnectionError("the judge is down"))


@pytest.fixture
def store() -> InMemoryVectorStore:
    vectors = InMemoryVectorStore(HashingEmbeddings())
    vectors.add_documents(DOCUMENTS)
    return vectors
