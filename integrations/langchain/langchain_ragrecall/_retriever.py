"""``RecallRetriever``: any retriever, unchanged, plus a recall score for each known query.

The wrapped retriever runs as a child run with the same callbacks, and its documents are
returned as they are. When a reference is known for the query (``config["metadata"]
["reference"]`` first, then ``references``), the query, the documents and the reference go to
a ``RecallLogger``, which scores them on worker threads (or inline) and writes one record (a
results file's ``Record``, every metric's result under ``results``) to every sink. When none
is, they go to a ``LiveScorer`` (``no_reference``), which scores them off the request path
with a metric that needs no reference and writes to the same sinks. The record's ``run_id``
is this retriever run's id.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import ensure_config, run_in_executor
from pydantic import ConfigDict, Field, PrivateAttr, model_validator

from ragrecall import ContextRecall, Metric, RecallLogger, RecallResult, Sample
from ragrecall.adapters import (
    LiveScorer,
    ReferenceBook,
    References,
    SampleKey,
    as_reference,
    check_rate,
    sampled,
)
from ragrecall.engines import Record
from ragrecall.sinks import CallableSink, Sink

from ._documents import documents_to_chunks
from ._live import live_scorer, offer
from ._stats import RetrieverStats
from ._wrapped import CONFIG, inner_config, with_k

__all__ = ["RecallRetriever", "RetrieverStats"]


log = logging.getLogger("ragrecall")


class RecallRetriever(BaseRetriever):
    """Wraps ``retriever``; returns its documents unchanged and logs their context recall.

    Args:
        retriever: any retriever (or runnable from a query to documents).
        references: where references come from: a mapping query -> reference, a dataset of
            samples, or a callable query -> reference | None. ``config["metadata"]
            ["reference"]`` (the key is ``reference_key``) wins over it.
        metrics: metrics to score with; default ``[ContextRecall()]`` (the embedded judge).
        sinks: where records go (``JsonlSink``, ``SQLiteSink``, ...). The last ``keep``
            records are also kept in memory, in ``records``.
        logger: a ``RecallLogger`` of your own instead (then ``metrics``, ``sinks`` and the
            queue options are its business, and ``close`` only flushes it).
        inline: score before returning the documents instead of on a worker thread.
        on_full: when the queue is full, ``"drop"`` (count it, keep retrieval fast; the
            default) or ``"block"``.
        max_queue: retrievals waiting to be scored at most, in each queue (with and without
            a reference).
        sample_rate: the share of retrievals to score, picked by a hash of ``sample_key``
            (``"query"``: the query text, the default, or ``"run_id"``), so the same queries
            are scored run after run; the rest count in ``stats.sampled_out`` (in
            ``live.stats.skipped_by_sampling`` for those without a reference), and records
            carry the rate in ``extra["sample_rate"]``.
        no_reference: what scores a retrieval whose query has no reference: ``"sufficiency"``
            (the default: do the contexts suffice to answer the question?), the name of
            another metric that needs no reference, or ``"skip"`` (count it in
            ``stats.no_reference``, score nothing). It runs on one background thread, never
            on the retrieval's path, with the judge of the first metric that has one, and
            costs judge calls on your traffic: up to ``max_calls_per_minute`` (a metric may
            make several calls a retrieval); beyond them retrievals wait in a queue of
            ``max_queue`` and are dropped, counted in ``live.stats.dropped``, once it is full.
        max_calls_per_minute: judge calls a minute for the retrievals without a reference
            (None: no limit).
        k: how many documents to return, set on a copy of ``retriever`` (yours is left as it
            is): its ``k`` field, or ``k`` in its ``search_kwargs`` (a vector store's
            retriever). A retriever with neither is refused: set the number on it instead.

    Use it as a context manager, or call ``flush()`` / ``close()`` to wait for the scores.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    retriever: Runnable[str, list[Document]]
    reference_key: str = "reference"
    inline: bool = False
    sample_key: SampleKey = "query"
    k: int | None = Field(default=None, ge=1)

    _references: ReferenceBook = PrivateAttr()
    _logger: RecallLogger = PrivateAttr()
    _owns_logger: bool = PrivateAttr(default=True)
    _records: deque[Record] = PrivateAttr()
    _stats: RetrieverStats = PrivateAttr(default_factory=RetrieverStats)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _live: LiveScorer | None = PrivateAttr(default=None)

    def __init__(
        self,
        retriever: Runnable[str, list[Document]],
        references: References | None = None,
        *,
        metrics: Sequence[Metric[RecallResult]] | None = None,
        sinks: Sequence[Sink] = (),
        logger: RecallLogger | None = None,
        inline: bool = False,
        on_full: Literal["block", "drop"] = "drop",
        max_queue: int = 1000,
        workers: int = 1,
        keep: int = 1000,
        reference_key: str = "reference",
        sample_rate: float = 1.0,
        sample_key: SampleKey = "query",
        k: int | None = None,
        no_reference: str = "sufficiency",
        max_calls_per_minute: int | None = 60,
        **kwargs: Any,
    ):
        super().__init__(
            retriever=retriever,
            k=k,
            reference_key=reference_key,
            inline=inline,
            sample_key=sample_key,
            **kwargs,
        )
        self._stats.sample_rate = check_rate(sample_rate)
        self._references = ReferenceBook(references)
        self._records = deque(maxlen=keep)
        if logger is not None:
            self._logger = logger
            self._owns_logger = False
        else:
            self._logger = RecallLogger(
                list(metrics) if metrics else [ContextRecall()],
                [*sinks, CallableSink(self._records.append)],
                max_queue=max_queue,
                on_full=on_full,
                workers=workers,
                inline=inline,
            )
        self._live = live_scorer(
            no_reference,
            self._logger,
            sample_rate=sample_rate,
            max_calls_per_minute=max_calls_per_minute,
            max_queue=max_queue,
        )

    @model_validator(mode="after")
    def _set_k(self) -> RecallRetriever:
        if self.k is not None:
            self.retriever = with_k(self.retriever, self.k)
        return self

    @property
    def logger(self) -> RecallLogger:
        """The logger scoring the retrievals (its ``stats``: written, dropped, unscorable)."""
        return self._logger

    @property
    def stats(self) -> RetrieverStats:
        return self._stats

    @property
    def live(self) -> LiveScorer | None:
        """The retrievals without a reference' scorer (``stats``); None when ``"skip"``."""
        return self._live

    @property
    def records(self) -> list[Record]:
        """The latest records written by this retriever's own logger, oldest first (each a
        results file's ``Record``: ``records[-1].result`` with one metric)."""
        return list(self._records)

    def flush(self) -> None:
        """Wait until every submitted (or live-queued) retrieval is scored and written."""
        if self._live is not None:
            self._live.flush()
        self._logger.flush()

    def close(self) -> None:
        """Flush; then stop the logger and close the sinks, if the logger is ours."""
        if self._live is not None:
            self._live.close()
        (self._logger.close if self._owns_logger else self._logger.flush)()

    def __enter__(self) -> RecallRetriever:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def invoke(
        self, input: str, config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[Document]:
        token = CONFIG.set(ensure_config(config))  # for the wrapped retriever, whole
        try:
            return super().invoke(input, config, **kwargs)
        finally:
            CONFIG.reset(token)

    async def ainvoke(
        self, input: str, config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[Document]:
        token = CONFIG.set(ensure_config(config))
        try:
            return await super().ainvoke(input, config, **kwargs)
        finally:
            CONFIG.reset(token)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        documents = self.retriever.invoke(query, inner_config(run_manager), **kwargs)
        job = self._job(query, documents, run_manager)
        if job is not None:
            self._submit(*job)
        return documents

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        documents = await self.retriever.ainvoke(query, inner_config(run_manager), **kwargs)
        job = self._job(query, documents, run_manager)
        if job is not None:
            if self.inline:
                await run_in_executor(None, self._submit, *job)
            else:
                self._submit(*job)
        return documents

    def _job(
        self,
        query: str,
        documents: list[Document],
        run_manager: CallbackManagerForRetrieverRun | AsyncCallbackManagerForRetrieverRun,
    ) -> tuple[Sample, str, dict[str, Any]] | None:
        """The sample to score, or None (counted) when it is sampled out or has no reference
        (then handed to the live scorer, which samples it alike)."""
        rate = self._stats.sample_rate
        key = query if self.sample_key == "query" else str(run_manager.run_id)
        parent = run_manager.parent_run_id
        extra: dict[str, Any] = {
            "parent_run_id": str(parent) if parent else None,
            "retriever": self.name or self.retriever.get_name(),
        }
        with self._lock:
            self._stats.retrievals += 1
        try:
            reference = as_reference(query, run_manager.metadata.get(self.reference_key))
            if reference is None and self._references:
                reference = self._references.lookup(query)
            if reference is None:
                with self._lock:
                    self._stats.no_reference += 1
                if self._live is not None:
                    offer(self._live, key, query, documents, str(run_manager.run_id), extra)
                return None
            if not sampled(key, rate):
                with self._lock:
                    self._stats.sampled_out += 1
                return None
            sample = reference.model_copy(
                update={"retrieved_contexts": documents_to_chunks(documents)}
            )
        except Exception:
            self._failed(run_manager.run_id)
            return None
        extra |= {"sample_rate": rate} if rate < 1.0 else {}
        return sample, str(run_manager.run_id), extra

    def _submit(self, sample: Sample, run_id: str, extra: dict[str, Any]) -> None:
        try:
            self._logger.submit(sample, run_id=run_id, extra=extra)
        except Exception:
            self._failed(run_id)
            return
        with self._lock:
            self._stats.submitted += 1

    def _failed(self, run_id: object) -> None:
        """Scoring must never break retrieval: count, log, go on."""
        with self._lock:
            self._stats.errors += 1
        log.exception("ragrecall: could not submit the retrieval of run %s", run_id)
