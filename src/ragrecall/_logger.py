"""Score retrievals off the request path and write the records to sinks.

``RecallLogger.submit`` puts a sample on a bounded queue and returns at once; worker threads
score it with every metric and write one record per metric to every sink. When the queue is
full, ``on_full="block"`` waits for room and ``"drop"`` drops the sample and counts it in
``stats.dropped`` (and logs a warning): nothing is lost silently.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ._data import to_sample
from ._metrics.base import Metric
from ._schemas import RecallResult, Sample
from ._sinks import RecallRecord, Sink

__all__ = ["LoggerStats", "RecallLogger"]

log = logging.getLogger("ragrecall")


@dataclass
class LoggerStats:
    """What the logger did with the samples handed to it, counted as it goes."""

    submitted: int = 0
    written: int = 0
    dropped: int = 0
    unscorable: int = 0
    sink_errors: int = 0


@dataclass(frozen=True)
class _Job:
    sample: Sample
    run_id: str | None
    extra: Mapping[str, Any]


class RecallLogger:
    """A background scorer with a bounded queue. Use as a context manager, or call ``close``.

    Args:
        metrics: metrics to score each sample with.
        sinks: where records go.
        max_queue: samples waiting at most; then ``on_full`` applies.
        on_full: ``"block"`` (wait for room) or ``"drop"`` (count and warn).
        workers: scoring threads (a local judge serves one sample per slot).
        inline: score in the caller's thread instead (``submit`` returns when written).
    """

    def __init__(
        self,
        metrics: Sequence[Metric[RecallResult]],
        sinks: Sequence[Sink],
        *,
        max_queue: int = 1000,
        on_full: Literal["block", "drop"] = "block",
        workers: int = 1,
        inline: bool = False,
    ):
        if not metrics:
            raise ValueError("RecallLogger needs at least one metric")
        if on_full not in ("block", "drop"):
            raise ValueError(f"on_full must be 'block' or 'drop', not {on_full!r}")
        self.metrics = list(metrics)
        self.sinks = list(sinks)
        self.on_full = on_full
        self.inline = inline
        self.stats = LoggerStats()
        self._lock = threading.Lock()
        self._queue: queue.Queue[_Job | None] = queue.Queue(maxsize=max_queue)
        self._threads = (
            []
            if inline
            else [
                threading.Thread(target=self._work, name=f"ragrecall-logger-{i}", daemon=True)
                for i in range(workers)
            ]
        )
        for thread in self._threads:
            thread.start()
        self._closed = False

    def submit(
        self,
        sample: Sample | Mapping[str, Any],
        *,
        run_id: str | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        """Queue ``sample`` for scoring (or score it now when ``inline``)."""
        if self._closed:
            raise RuntimeError("this RecallLogger is closed")
        job = _Job(to_sample(sample), run_id, dict(extra or {}))
        with self._lock:
            self.stats.submitted += 1
        if self.inline:
            self._process(job)
            return
        try:
            self._queue.put(job, block=self.on_full == "block")
        except queue.Full:
            with self._lock:
                self.stats.dropped += 1
            log.warning("ragrecall: queue full, dropped the sample for run %s", run_id)

    def flush(self) -> None:
        """Wait until every queued sample is scored and written."""
        self._queue.join()

    def close(self) -> None:
        """Flush, stop the workers and close the sinks."""
        if self._closed:
            return
        self.flush()
        self._closed = True
        for _ in self._threads:
            self._queue.put(None)
        for thread in self._threads:
            thread.join()
        for sink in self.sinks:
            sink.close()

    def __enter__(self) -> RecallLogger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _work(self) -> None:
        while True:
            job = self._queue.get()
            try:
                if job is None:
                    return
                self._process(job)
            finally:
                self._queue.task_done()

    def _process(self, job: _Job) -> None:
        for metric in self.metrics:
            try:
                result = metric.score(job.sample)
            except Exception as exc:  # a missing judge model, say: still one record
                result = metric.unscorable(f"{type(exc).__name__}: {exc}")
            self._write(job, result)

    def _write(self, job: _Job, result: RecallResult) -> None:
        record = RecallRecord(
            run_id=job.run_id,
            query=job.sample.user_input,
            reference=job.sample.reference,
            chunks=job.sample.retrieved_contexts,
            result=result,
            extra=dict(job.extra),
        )
        with self._lock:
            self.stats.unscorable += result.status == "unscorable"
        for sink in self.sinks:
            try:
                sink.write(record)
                with self._lock:
                    self.stats.written += 1
            except Exception:
                with self._lock:
                    self.stats.sink_errors += 1
                log.exception(
                    "ragrecall: sink %s failed for run %s", type(sink).__name__, job.run_id
                )
