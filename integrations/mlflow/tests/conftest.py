"""Offline parts for the tests: ragrecall's rule-based stand-in for a judge
(``ragrecall.testing.KeywordJudge``: a claim is supported by the first passage holding all its
words), and a real in-memory vector store on langchain-ragrecall's hashing embedding."""

from __future__ import annotations

import pytest
from langchain_core.documents import Document
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_ragrecall import HashingEmbeddings

from ragrecall.testing import KeywordJudge

DOCUMENTS = [
    Document("The Eiffel Tower is in Paris.", id="eiffel", metadata={"source": "paris.txt"}),
    Document("The Eiffel Tower was finished in 1889.", id="eiffel-1889"),
    Document("The Colosseum is in Rome.", id="colosseum"),
    Document("Cats purr when they are content.", id="cats"),
]


@pytest.fixture
def judge() -> KeywordJudge:
    return KeywordJudge()


@pytest.fixture
def failing_judge() -> KeywordJudge:
    return KeywordJudge(fail=True)


@pytest.fixture
def store() -> InMemoryVectorStore:
    vectors = InMemoryVectorStore(HashingEmbeddings())
    vectors.add_documents(DOCUMENTS)
    return vectors
