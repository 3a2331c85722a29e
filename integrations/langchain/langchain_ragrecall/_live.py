"""The retrievals without a reference, for ``RecallRetriever`` and ``RecallCallbackHandler``:
``live_scorer`` makes their ``ragrecall.adapters.LiveScorer`` from ``no_reference``, and
``offer`` hands one to it (the sample is built on the scorer's thread)."""

from __future__ import annotations

from functools import partial
from typing import Any

from langchain_core.documents import Document

from ragrecall import RecallLogger, Sample
from ragrecall.adapters import LiveScorer, no_reference_metric

from ._documents import documents_to_chunks

__all__ = ["live_scorer", "offer"]


def live_scorer(
    no_reference: str,
    logger: RecallLogger | None,
    *,
    sample_rate: float,
    max_calls_per_minute: int | None,
    max_queue: int,
) -> LiveScorer | None:
    """None for ``"skip"`` or no logger; else a scorer with the metric ``no_reference`` (the
    judge of ``logger``'s metrics) writing to ``logger``'s sinks. ValueError naming the
    argument."""
    LiveScorer.check(
        sample_rate=sample_rate, max_calls_per_minute=max_calls_per_minute, max_queue=max_queue
    )
    if not isinstance(no_reference, str):
        raise ValueError(f"no_reference must be a metric name or 'skip', not {no_reference!r}")
    if no_reference == "skip" or logger is None:
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
    documents: list[Document],
    run_id: str,
    extra: dict[str, Any],
) -> None:
    live.offer(key, partial(_sample, query, list(documents)), run_id=run_id, extra=extra)


def _sample(query: str, documents: list[Document]) -> Sample:
    return Sample(user_input=query, retrieved_contexts=documents_to_chunks(documents))
