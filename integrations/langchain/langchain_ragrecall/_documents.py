"""LangChain documents to ragrecall chunks.

A chunk's id is the document's ``id``, else its metadata ``id`` or ``source``, else its
1-based position; a repeated id gets ``#<rank>`` appended, since a sample's ids are unique.
Documents may also come as dicts: ``{"page_content", "metadata", "id"}`` (LangSmith run
outputs) or LangChain's serialized form ``{"lc": 1, "type": "constructor", "kwargs": {...}}``.

``step_chunks`` joins the documents of several retrieval steps (an agent's searches for one
answer): each chunk's metadata says which step first retrieved it, as ``load_traces`` does.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_core.documents import Document

from ragrecall import Chunk
from ragrecall.adapters import RETRIEVAL_QUERY, RETRIEVAL_STEP

__all__ = ["documents_to_chunks", "step_chunks", "to_document", "unique"]

_SCORE_KEYS = ("score", "relevance_score", "similarity_score", "_score")


def to_document(value: Document | Mapping[str, Any]) -> Document:
    """A Document from a Document, a plain dict or LangChain's serialized dict."""
    if isinstance(value, Document):
        return value
    if not isinstance(value, Mapping):
        raise TypeError(f"expected a Document or a dict, got {type(value).__name__}")
    fields: Mapping[str, Any] = value
    if value.get("lc") == 1 and isinstance(value.get("kwargs"), Mapping):
        fields = value["kwargs"]
    text = fields.get("page_content", fields.get("text"))
    if not isinstance(text, str):
        raise TypeError(f"a document dict needs 'page_content', got keys {sorted(fields)}")
    return Document(
        page_content=text, metadata=dict(fields.get("metadata") or {}), id=fields.get("id")
    )


def documents_to_chunks(documents: Iterable[Document | Mapping[str, Any]]) -> list[Chunk]:
    """Chunks in the documents' order, with rank, retriever score and (JSON-safe) metadata."""
    chunks: list[Chunk] = []
    seen: set[str] = set()
    for rank, item in enumerate(documents, start=1):
        doc = to_document(item)
        meta = doc.metadata
        base = doc.id or meta.get("id") or meta.get("source") or rank
        chunk_id = str(base)
        if chunk_id in seen:
            chunk_id = f"{chunk_id}#{rank}"
        seen.add(chunk_id)
        chunks.append(
            Chunk(
                id=chunk_id,
                text=doc.page_content,
                score=_score(meta),
                rank=rank,
                metadata=_json_safe(meta),
            )
        )
    return chunks


def _score(metadata: Mapping[str, Any]) -> float | None:
    for key in _SCORE_KEYS:
        value = metadata.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            number = float(value)
            return number if math.isfinite(number) else None
    return None


def _json_safe(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """Metadata as JSON would keep it (unknown objects become strings), so sinks never fail."""
    safe: dict[str, Any] = json.loads(json.dumps(dict(metadata), default=str, skipkeys=True))
    return safe


def unique(documents: list[Document]) -> list[Document]:
    """Each document once, first kept (two retrievers may return the same document)."""
    seen: set[tuple[str | None, str]] = set()
    kept = []
    for doc in documents:
        key = _key(doc)
        if key not in seen:
            seen.add(key)
            kept.append(doc)
    return kept


def step_chunks(steps: Sequence[tuple[str, Sequence[Document]]]) -> list[Chunk]:
    """The chunks of the union of several retrieval steps' documents, each ``(query,
    documents)`` in start order: each document once, first kept. Where there are several
    steps, each chunk's metadata has ``retrieval_step`` (1-based: the step that first
    retrieved it) and ``retrieval_query`` (that step's query); one step: plain chunks."""
    first: dict[tuple[str | None, str], tuple[Document, int, str]] = {}
    for step, (query, documents) in enumerate(steps, start=1):
        for doc in documents:
            first.setdefault(_key(doc), (doc, step, query))
    chunks = documents_to_chunks(doc for doc, _, _ in first.values())
    if len(steps) < 2:
        return chunks
    return [
        chunk.model_copy(
            update={"metadata": {**chunk.metadata, RETRIEVAL_STEP: step, RETRIEVAL_QUERY: query}}
        )
        for chunk, (_, step, query) in zip(chunks, first.values(), strict=True)
    ]


def _key(doc: Document) -> tuple[str | None, str]:
    return (doc.id, doc.page_content)
