"""Offline parts for the tests: ragrecall's scripted judge (``ragrecall.testing``: a claim is
supported by the first passage holding all its words), and a real in-memory vector store on
langchain-ragrecall's hashing embedding."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pytest
from hashing_embeddings import HashingEmbeddings
from langchain_core.documents import Document
from langchain_core.messages import BaseMessage
from langchain_core.vectorstores import InMemoryVectorStore

from ragrecall.testing import ScriptedJudge, keyword_reply, passages

_WORD = re.compile(r"[a-z0-9]+")

DOCUMENTS = [
    Document("The Eiffel Tower is in Paris.", id="eiffel", metadata={"source": "paris.txt"}),
    Document("The Eiffel Tower was finished in 1889.", id="eiffel-1889"),
    Document("The Colosseum is in Rome.", id="colosseum"),
    Document("Cats purr when they are content.", id="cats"),
]


def keyword_and_relevance(messages: Sequence[BaseMessage]) -> Any:
    """``keyword_reply``, and relevance too (context precision): a passage is relevant when
    the reference answer holds all its words."""
    human = next(str(m.content) for m in messages if m.type == "human")
    if "\nReference answer: " not in human:
        return keyword_reply(messages)
    reference = set(_WORD.findall(human.split("\nReference answer: ", 1)[1].split("\n\n")[0]))
    found = passages(messages)
    if not found:  # one passage a call
        passage = human.split("\n\nPassage:\n", 1)[1].rsplit("\n\n", 1)[0]
        return {"relevant": set(_WORD.findall(passage)) <= reference}
    return {
        "verdicts": [
            {"passage": n, "relevant": set(_WORD.findall(text)) <= reference}
            for n, text in found.items()
        ]
    }


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
