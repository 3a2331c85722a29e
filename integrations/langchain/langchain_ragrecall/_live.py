"""The retrievals without a reference, for ``RecallRetriever`` and ``RecallCallbackHandler``:
``live_scorer`` makes their ``ragrecall.adapters.LiveScorer`` from ``no_reference``, and
``offer`` hands one to it (the sample is built on the scorer's thread; ``offer_chunks`` takes
a function that makes its chunks, for a trace's several retrievals joined)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from langchain_core.documents import Document

from ragrecall import Chunk, Sample
from ragrecall.adapters import LiveScorer, live_scorer

from ._documents import documents_to_chunks

__all__ = ["live_scorer", "offer", "offer_chunks"]


def offer(
    live: LiveScorer,
    key: str | None,
    query: str,
    documents: list[Document],
    run_id: str,
    extra: dict[str, Any],
) -> None:
    chunks = partial(documents_to_chunks, list(documents))
    offer_chunks(live, key, query, chunks, run_id, extra)


def offer_chunks(
    live: LiveScorer,
    key: str | None,
    query: str,
    chunks: Callable[[], list[Chunk]],
    run_id: str,
    extra: dict[str, Any],
) -> None:
    live.offer(key, partial(_sample, query, chunks), run_id=run_id, extra=extra)


def _sample(query: str, chunks: Callable[[], list[Chunk]]) -> Sample:
    return Sample(user_input=query, retrieved_contexts=chunks())
