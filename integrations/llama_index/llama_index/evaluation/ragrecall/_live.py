"""The queries without a reference, for ``RecallCapture``: ``live_scorer`` makes their
``ragrecall.adapters.LiveScorer`` from ``no_reference``, and ``offer`` hands one to it (the
sample is built on the scorer's thread, never on the query's)."""

from __future__ import annotations

from functools import partial
from typing import Any

from llama_index.core.schema import NodeWithScore

from ragrecall import Sample
from ragrecall.adapters import LiveScorer, live_scorer

from ._nodes import chunks_from_nodes

__all__ = ["live_scorer", "offer"]


def offer(
    live: LiveScorer,
    key: str | None,
    query: str,
    nodes: list[NodeWithScore],
    response: str | None,
    run_id: str | None,
    extra: dict[str, Any],
) -> None:
    source = partial(_sample, query, list(nodes), response)
    live.offer(key, source, run_id=run_id, extra=extra)


def _sample(query: str, nodes: list[NodeWithScore], response: str | None) -> Sample:
    chunks = chunks_from_nodes(nodes)
    return Sample(
        user_input=query,
        response=response,
        retrieved_contexts=chunks,
        retrieved_ids=[c.id for c in chunks],
    )
