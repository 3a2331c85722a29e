"""The retrievals without a reference, for ``RecallRetriever`` and ``RecallCallbackHandler``:
``live_scorer`` makes their ``ragrecall.adapters.LiveScorer`` from ``no_reference``, and
``offer`` hands one to it (the sample is built on the scorer's thread)."""

from __future__ import annotations

from functools import partial
from typing import Any

from langchain_core.documents import Document

from ragrecall import Sample
from ragrecall.adapters import LiveScorer, live_scorer

from ._documents import documents_to_chunks

__all__ = ["live_scorer", "offer"]


def offer(
    live: LiveScorer,
    key: str | None,
    query: str,
    documents: list[Document],
    run_id: str,
    extra: dict[str, Any],
) -> None:
    live.offer(key, partial(_sample, query, list(documents)), run_id=run_id, extra=extra)


def _sample(query: str, documents: list[Document]) -> Sample:
    return Sample(user_input=query, retrieved_contexts=documents_to_chunks(documents))
