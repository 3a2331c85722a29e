"""Real LlamaIndex parts for the tests: an index over a few documents with an offline lexical
embedding, and a query engine that synthesises with MockLLM."""

from __future__ import annotations

import hashlib
import math
import re
from typing import Any

import pytest
from llama_index.core import VectorStoreIndex
from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.embeddings import BaseEmbedding
from llama_index.core.llms import MockLLM
from llama_index.core.schema import TextNode

_WORD = re.compile(r"[a-z0-9]+")


class HashingEmbedding(BaseEmbedding):
    """Bag of words hashed into ``dims`` buckets, L2-normalised: deterministic and offline."""

    dims: int = 256

    def _vector(self, text: str) -> list[float]:
        vector = [0.0] * self.dims
        for word in _WORD.findall(text.lower()):
            vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dims] += 1.0
        norm = math.sqrt(sum(x * x for x in vector)) or 1.0
        return [x / norm for x in vector]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vector(text)


DOCUMENTS = {
    "eiffel": "The Eiffel Tower is in Paris. The Eiffel Tower opened in 1889.",
    "banana": "Bananas are yellow. Bananas grow in tropical regions.",
    "moon": "The Moon orbits the Earth. The Moon has no atmosphere.",
}

# question -> (reference answer, the document that answers it)
QUESTIONS = {
    "Where is the Eiffel Tower?": (
        "The Eiffel Tower is in Paris. The Eiffel Tower is made of gold.",
        "eiffel",
    ),
    "What colour are bananas?": ("Bananas are yellow.", "banana"),
    "What does the Moon orbit?": ("The Moon orbits the Earth. The Moon has rings.", "moon"),
}


@pytest.fixture(scope="session")
def index() -> VectorStoreIndex:
    nodes = [TextNode(id_=key, text=text, metadata={"doc": key}) for key, text in DOCUMENTS.items()]
    return VectorStoreIndex(nodes, embed_model=HashingEmbedding())


@pytest.fixture(scope="session")
def query_engine(index: VectorStoreIndex) -> BaseQueryEngine:
    return index.as_query_engine(llm=MockLLM(), similarity_top_k=2)


@pytest.fixture
def dataset() -> list[dict[str, Any]]:
    return [{"query": q, "reference": ref} for q, (ref, _) in QUESTIONS.items()]


@pytest.fixture
def questions() -> dict[str, tuple[str, str]]:
    return dict(QUESTIONS)
