"""The queries without a reference, for ``RecallCapture``: ``live_scorer`` makes their
``ragrecall.adapters.LiveScorer`` from ``no_reference``, and ``offer`` hands one to it (the
sample is built on the scorer's thread, never on the query's)."""

from __future__ import annotations

from functools import partial
from typing import Any

from llama_index.core.schema import NodeWithScore

from ragrecall import RecallLogger, Sample
from ragrecall.adapters import LiveScorer, no_reference_metric

from ._nodes import chunks_from_nodes

__all__ = ["live_scorer", "offer"]


def live_scorer(
    no_reference: str,
    logger: RecallLogger,
    *,
    sample_rate: float,
    max_calls_per_minute: int | None,
    max_queue: int,
) -> LiveScorer | None:
    """None for ``"skip"``; else a scorer with the metric ``no_reference`` (the judge of
    ``logger``'s metrics) writing to ``logger``'s sinks. ValueError naming the argument."""
    LiveScorer.check(
        sample_rate=sample_rate, max_calls_per_minute=max_calls_per_minute, max_queue=max_queue
    )
    if not isinstance(no_reference, str):
        raise ValueError(f"no_reference must be a metric name or 'skip', not {no_reference!r}")
    if no_reference == "skip":
        return None
    metric = no_reference_metric(no_reference, logger.metrics)
    return LiveScorer(
        metric,
        logger.sinks,
        sample_rate=sample_rate,
        max_calls_per_minute=max_calls_per_minute,
        max_queue=max_queue,
    )


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
