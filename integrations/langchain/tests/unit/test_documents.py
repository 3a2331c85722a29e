"""Documents to chunks, and the offline hashing embedding."""

from __future__ import annotations

import math
from datetime import date

import pytest
from hashing_embeddings import HashingEmbeddings
from langchain_core.documents import Document
from langchain_core.load import dumpd
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_ragrecall import documents_to_chunks

from ragrecall import Sample


def test_chunk_ids_ranks_scores_and_metadata() -> None:
    docs = [
        Document("a", id="doc-a", metadata={"source": "s.txt", "score": 0.9}),
        Document("b", metadata={"id": 7, "relevance_score": 0.5}),
        Document("c", metadata={"source": "s.txt", "when": date(2024, 1, 2)}),
        Document("d"),
        Document("e", id="doc-a"),
    ]
    chunks = documents_to_chunks(docs)
    assert [c.id for c in chunks] == ["doc-a", "7", "s.txt", "4", "doc-a#5"]
    assert [c.rank for c in chunks] == [1, 2, 3, 4, 5]
    assert [c.score for c in chunks] == [0.9, 0.5, None, None, None]
    assert chunks[2].metadata == {"source": "s.txt", "when": "2024-01-02"}  # JSON-safe
    Sample(retrieved_contexts=chunks)  # ids are unique: a valid sample


def test_dicts_and_serialized_documents() -> None:
    doc = Document("text", id="x", metadata={"k": 1})
    plain = {"page_content": "text", "metadata": {"k": 1}, "id": "x", "type": "Document"}
    for value in (doc, plain, dumpd(doc)):
        (chunk,) = documents_to_chunks([value])
        assert (chunk.id, chunk.text, chunk.metadata) == ("x", "text", {"k": 1})
    with pytest.raises(TypeError):
        documents_to_chunks([{"metadata": {}}])


def test_hashing_embeddings_are_deterministic_normalised_and_lexical() -> None:
    emb = HashingEmbeddings(dims=256)
    a, b = emb.embed_documents(["Cats purr softly.", "Cats purr softly."])
    assert a == b and len(a) == 256 and math.isclose(sum(x * x for x in a), 1.0)
    assert emb.embed_query("the of and") == [0.0] * 256
    store = InMemoryVectorStore.from_texts(
        ["Cats purr when content.", "The Colosseum is in Rome.", "Rust has no GC."], emb
    )
    assert store.similarity_search("Why do cats purr?", k=1)[0].page_content.startswith("Cats")
    assert store.similarity_search("Rome Colosseum", k=1)[0].page_content.endswith("Rome.")
