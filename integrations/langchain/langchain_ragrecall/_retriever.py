"""``RecallRetriever``: any retriever, unchanged, plus a recall score for each known query
(one concern over 300 lines: the wrapper, its sync and async paths and its ``k``).

The wrapped retriever runs as a child run with the same callbacks, and its documents are
returned as they are. When a reference is known for the query (``config["metadata"]
["reference"]`` first, then ``references``), the query, the documents and the reference go to
a ``RecallLogger``, which scores them on worker threads (or inline) and writes one record (a
results file's ``Record``, every metric's result under ``results``) to every sink. The
record's ``run_id`` is this retriever run's id.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import ensure_config, patch_config, run_in_executor
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from ragrecall import ContextRecall, Metric, RecallLogger, RecallResult, Sample
from ragrecall.adapters import (
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

__all__ = ["RecallRetriever", "RetrieverStats"]


@dataclass
class RetrieverStats:
    """Counts of retrievals: ``submitted`` ones were handed to the logger (its own ``stats``
    say what was scored and written); ``no_reference`` ones had no known reference; ``errors``
    counts retrievals whose sample could not be built."""

    retrievals: int = 0
    submitted: int = 0
    no_reference: int = 0
    errors: int = 0
    sampled_out: int = 0  # outside ``sample_rate``: not scored, by design
    sample_rate: float = 1.0


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
        sample_rate: the share of retrievals to score, picked by a hash of ``sample_key``
            (``"query"``: the query text, the default, or ``"run_id"``), so the same queries
            are scored run after run; the rest count in ``stats.sampled_out``, and records
            carry the rate in ``extra["sample_rate"]``.
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

    @model_validator(mode="after")
    def _set_k(self) -> RecallRetriever:
        if self.k is not None:
            self.retriever = _with_k(self.retriever, self.k)
        return self

    @property
    def logger(self) -> RecallLogger:
        """The logger scoring the retrievals (its ``stats``: written, dropped, unscorable)."""
        return self._logger

    @property
    def stats(self) -> RetrieverStats:
        return self._stats

    @property
    def records(self) -> list[Record]:
        """The latest records written by this retriever's own logger, oldest first (each a
        results file's ``Record``: ``records[-1].result`` with one metric)."""
        return list(self._records)

    def flush(self) -> None:
        """Wait until every submitted retrieval is scored and written."""
        self._logger.flush()

    def close(self) -> None:
        """Flush; then stop the logger and close the sinks, if the logger is ours."""
        if self._owns_logger:
            self._logger.close()
        else:
            self._logger.flush()

    def __enter__(self) -> RecallRetriever:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def invoke(
        self, input: str, config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[Document]:
        token = _CONFIG.set(ensure_config(config))  # for the wrapped retriever, whole
        try:
            return super().invoke(input, config, **kwargs)
        finally:
            _CONFIG.reset(token)

    async def ainvoke(
        self, input: str, config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[Document]:
        token = _CONFIG.set(ensure_config(config))
        try:
            return await super().ainvoke(input, config, **kwargs)
        finally:
            _CONFIG.reset(token)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        documents = self.retriever.invoke(query, _inner_config(run_manager), **kwargs)
        job = self._job(query, documents, run_manager)
        if job is not None:
            self._submit(*job)
        return documents

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        documents = await self.retriever.ainvoke(query, _inner_config(run_manager), **kwargs)
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
        """The sample to score, or None (counted) when no reference is known."""
        rate = self._stats.sample_rate
        key = query if self.sample_key == "query" else str(run_manager.run_id)
        chosen = sampled(key, rate)
        with self._lock:
            self._stats.retrievals += 1
            self._stats.sampled_out += not chosen
        if not chosen:
            return None
        try:
            reference = as_reference(query, run_manager.metadata.get(self.reference_key))
            if reference is None and self._references:
                reference = self._references.lookup(query)
            if reference is None:
                with self._lock:
                    self._stats.no_reference += 1
                return None
            sample = reference.model_copy(
                update={"retrieved_contexts": documents_to_chunks(documents)}
            )
        except Exception:
            self._failed(run_manager.run_id)
            return None
        parent = run_manager.parent_run_id
        extra = {
            "parent_run_id": str(parent) if parent else None,
            "retriever": self.name or self.retriever.get_name(),
            **({"sample_rate": rate} if rate < 1.0 else {}),
        }
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


def _with_k(retriever: Runnable[str, list[Document]], k: int) -> Runnable[str, list[Document]]:
    """A copy of ``retriever`` that returns ``k`` documents: its ``k`` field set, or ``k`` in
    its ``search_kwargs``; ValueError (a ValidationError from the constructor) otherwise."""
    fields = type(retriever).model_fields if isinstance(retriever, BaseModel) else {}
    if isinstance(retriever, BaseModel) and "k" in fields:
        return retriever.model_copy(update={"k": k})
    search_kwargs = getattr(retriever, "search_kwargs", None)
    if isinstance(retriever, BaseModel) and isinstance(search_kwargs, dict):
        return retriever.model_copy(update={"search_kwargs": {**search_kwargs, "k": k}})
    raise ValueError(
        f"k={k}: the wrapped retriever ({type(retriever).__name__}) has neither a `k` field nor "
        "`search_kwargs`, so RecallRetriever cannot set how many documents it returns; set "
        "that on the wrapped retriever instead"
    )


# The caller's config (configurable fields, tags, metadata) for the wrapped retriever, as
# LangChain's own EnsembleRetriever passes it on; callbacks become this run's children.
_CONFIG: ContextVar[RunnableConfig | None] = ContextVar("ragrecall_retriever_config", default=None)


def _inner_config(
    run_manager: CallbackManagerForRetrieverRun | AsyncCallbackManagerForRetrieverRun,
) -> RunnableConfig:
    return patch_config(_CONFIG.get(), callbacks=run_manager.get_child())
