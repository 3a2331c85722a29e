"""Log recall for every query LlamaIndex runs, from its instrumentation events.

``RecallCapture`` adds an event handler and a span handler to a dispatcher (the root one by
default). The span handler keeps each open span's parent, so every retrieval can be assigned
to the outermost query around it:

* a query (``QueryStartEvent`` ... ``QueryEndEvent`` in one span, not inside another query)
  gives one record: its response's ``source_nodes`` (or, if it has none, the nodes of the
  retrievals inside it), and the response text;
* a retrieval outside any query (a bare ``retriever.retrieve``, a chat engine's retrieval)
  gives one record with its nodes; retrievals nested in it (fusion, recursive retrievers) are
  part of it;
* a query that fails after retrieving gives one record of what it retrieved, with the error
  in ``extra``.

A query whose reference is known is submitted to the logger; the others go to a
``LiveScorer`` (``no_reference``), which scores them without one. The handlers only look the
reference up and hand the query on (``RecallLogger.submit``, ``LiveScorer.offer``: never a
wait); scoring and writing happen on the logger's workers and the scorer's thread.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

# llama_index.core.instrumentation re-exports these without __all__ (implicit re-export).
from llama_index.core.instrumentation import (  # type: ignore[attr-defined]
    Dispatcher,
    get_dispatcher,
)
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.query import QueryEndEvent, QueryStartEvent
from llama_index.core.instrumentation.events.retrieval import (
    RetrievalEndEvent,
    RetrievalStartEvent,
)
from llama_index.core.schema import NodeWithScore, QueryBundle, QueryType

from ragrecall import RecallLogger, Sample
from ragrecall.adapters import ReferenceBook, References, RunTree, SampleKey, check_rate, sampled

from ._handlers import EventHandler, SpanHandler
from ._live import live_scorer, offer
from ._nodes import chunks_from_nodes, source_nodes

__all__ = ["RecallCapture", "ReferenceLookup"]

# Query -> reference answer, or Sample fields such as {"reference": ..., "reference_ids": [...]}:
# a mapping, a callable, or a dataset (ragrecall.adapters.References).
ReferenceLookup = References


@dataclass
class _Open:
    """A query or top-level retrieval in progress."""

    kind: str  # "query" or "retrieval"
    query: str
    nodes: list[NodeWithScore] = field(default_factory=list)


class RecallCapture:
    """Log recall through ``logger`` for each query whose reference ``references`` knows.

    Args:
        logger: a ragrecall ``RecallLogger`` (its metrics and sinks decide what is scored and
            where records go).
        references: query text -> reference answer (or a mapping of Sample fields), as a
            mapping, a callable returning None when unknown, or a dataset with questions and
            references. Queries match exactly, then with case and whitespace folded.
        sample_rate: the share of queries to score, picked by a hash of ``sample_key``
            (``"query"``: the query text, the default, or ``"run_id"``: the span id), so the
            same queries are scored run after run; the rest count in ``sampled_out``, and
            records carry the rate in ``extra["sample_rate"]`` (for queries without a
            reference, ``live.stats.skipped_by_sampling`` counts the rest).
        no_reference: what scores a query without a reference: ``"sufficiency"`` (the
            default: do the contexts suffice to answer the question?), the name of another
            metric that needs no reference, or ``"skip"`` (count it in ``skipped``, score
            nothing). It runs on one background thread, never on the query's path, with the
            judge of the logger's metrics, writing to its sinks, and costs judge calls on your
            traffic: up to ``max_calls_per_minute`` (a metric may make several calls a query);
            beyond them queries wait in a queue of ``max_queue`` and are dropped, counted in
            ``live.stats.dropped``, once it is full.
        max_calls_per_minute: judge calls a minute for the queries without a reference
            (None: no limit).
        max_queue: queries without a reference waiting to be scored at most.

    Use as a context manager (attach on enter; on exit detach, close the live scorer and flush
    the logger), or call ``attach()`` / ``close()``. Records carry the query span's id as
    ``run_id``; ``live.stats`` counts the queries without a reference as they go.
    """

    def __init__(
        self,
        logger: RecallLogger,
        references: ReferenceLookup,
        *,
        sample_rate: float = 1.0,
        sample_key: SampleKey = "query",
        no_reference: str = "sufficiency",
        max_calls_per_minute: int | None = 60,
        max_queue: int = 1000,
    ) -> None:
        self.logger = logger
        self.references = ReferenceBook(references)
        self.sample_rate = check_rate(sample_rate)
        self.live = live_scorer(
            no_reference,
            logger,
            sample_rate=sample_rate,
            max_calls_per_minute=max_calls_per_minute,
            max_queue=max_queue,
        )
        self.sample_key = sample_key
        self.submitted = 0
        self.skipped = 0  # queries without a known reference
        self.sampled_out = 0  # outside ``sample_rate``: not scored, by design
        self._lock = threading.Lock()
        self._spans_open: RunTree[str] = RunTree()
        self._open: dict[str, _Open] = {}
        self._events = EventHandler()
        self._events._capture = self
        self._spans = SpanHandler()
        self._spans._capture = self
        self._dispatcher: Dispatcher | None = None

    def attach(self, dispatcher: Dispatcher | None = None) -> RecallCapture:
        """Listen on ``dispatcher`` (default: LlamaIndex's root dispatcher, which sees all)."""
        if self._dispatcher is not None:
            raise RuntimeError("this RecallCapture is already attached")
        self._dispatcher = dispatcher or get_dispatcher()
        self._dispatcher.add_span_handler(self._spans)
        self._dispatcher.add_event_handler(self._events)
        return self

    def detach(self) -> None:
        """Stop listening; queries in flight are not logged."""
        if self._dispatcher is None:
            return
        if self._events in self._dispatcher.event_handlers:
            self._dispatcher.event_handlers.remove(self._events)
        if self._spans in self._dispatcher.span_handlers:
            self._dispatcher.span_handlers.remove(self._spans)
        self._dispatcher = None
        with self._lock:
            self._open.clear()
        self._spans_open.clear()

    def __enter__(self) -> RecallCapture:
        return self.attach()

    def flush(self) -> None:
        """Wait until the queries handed on so far are scored and written."""
        if self.live is not None:
            self.live.flush()
        self.logger.flush()

    def close(self) -> None:
        """Detach, close the live scorer (what it cannot score in time is counted in
        ``live.stats.abandoned``) and flush the logger (yours to close, after it)."""
        self.detach()
        if self.live is not None:
            self.live.close()
        self.logger.flush()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- span tree --------------------------------------------------------------------------

    def _enter(self, span_id: str, parent_id: str | None) -> None:
        self._spans_open.enter(span_id, parent_id)

    def _leave(self, span_id: str, err: BaseException | None) -> None:
        self._spans_open.leave(span_id)
        with self._lock:
            failed = self._open.pop(span_id, None)
        if failed is not None and failed.nodes:
            error = f"{type(err).__name__}: {err}" if err else "the span ended early"
            self._submit(span_id, failed, failed.nodes, None, {"error": error})

    def _root(self, span_id: str | None) -> str | None:
        """The open query or top-level retrieval at or above ``span_id`` (lock held)."""
        if span_id is None:
            return None
        return next((s for s in self._spans_open.ancestors(span_id) if s in self._open), None)

    # -- events -----------------------------------------------------------------------------

    def _handle(self, event: BaseEvent) -> None:
        span_id = event.span_id
        if isinstance(event, QueryStartEvent):
            self._start(span_id, "query", event.query)
        elif isinstance(event, RetrievalStartEvent):
            self._start(span_id, "retrieval", event.str_or_query_bundle)
        elif isinstance(event, RetrievalEndEvent):
            with self._lock:
                root = self._root(span_id)
                if root is not None:
                    self._open[root].nodes.extend(event.nodes)
                done = self._open.pop(root) if root == span_id and root is not None else None
            if root is None:  # a retrieval outside any span we saw start
                done = _Open("retrieval", _query_str(event.str_or_query_bundle), event.nodes)
            if done is not None:
                self._submit(span_id, done, done.nodes, None, {})
        elif isinstance(event, QueryEndEvent) and span_id is not None:
            with self._lock:
                ended = self._open.pop(span_id, None)
            if ended is not None and ended.kind == "query":
                nodes = source_nodes(event.response)
                text = getattr(event.response, "response", None)
                answer = text if isinstance(text, str) else None  # never drain a stream
                self._submit(span_id, ended, ended.nodes if nodes is None else nodes, answer, {})

    def _start(self, span_id: str | None, kind: str, query: QueryType) -> None:
        """Open a record unless this span is inside a query or retrieval already open."""
        with self._lock:
            if span_id is not None and self._root(span_id) is None:
                self._open[span_id] = _Open(kind, _query_str(query))

    def _submit(
        self,
        span_id: str | None,
        item: _Open,
        nodes: list[NodeWithScore],
        response: str | None,
        extra: dict[str, Any],
    ) -> None:
        key = item.query if self.sample_key == "query" else span_id
        extra = {"kind": item.kind, **extra}
        reference = self.references.lookup(item.query)
        if reference is None:  # the live scorer samples it alike, off the query's path
            with self._lock:
                self.skipped += 1
            if self.live is not None:
                offer(self.live, key, item.query, nodes, response, span_id, extra)
            return
        if not sampled(key, self.sample_rate):
            with self._lock:
                self.sampled_out += 1
            return
        if self.sample_rate < 1.0:
            extra = {**extra, "sample_rate": self.sample_rate}
        chunks = chunks_from_nodes(nodes)
        sample: Sample = reference.model_copy(
            update={
                "response": response,
                "retrieved_contexts": chunks,
                "retrieved_ids": [c.id for c in chunks],
            }
        )
        self.logger.submit(sample, run_id=span_id, extra=extra)
        with self._lock:
            self.submitted += 1


def _query_str(query: QueryType | None) -> str:
    if isinstance(query, QueryBundle):
        return query.query_str
    return str(query) if query is not None else ""
