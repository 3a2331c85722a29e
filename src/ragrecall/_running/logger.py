"""Score retrievals off the request path and write the records to sinks.

``RecallLogger.submit`` puts a sample on a bounded queue and returns at once; worker threads
score it with every metric and write one record to every sink: the ``Record`` of a run's
results file (every metric's result under ``results``), with the run id, the time and
``extra``. When the queue is
full, ``on_full="block"`` waits for room and ``"drop"`` drops the sample and counts it in
``stats.dropped`` (and logs a warning): nothing is lost silently.

A logger left open when the program ends is flushed then (for up to ``exit_timeout`` seconds,
before the embedded judge stops) and its sinks are closed; what could not be written in that
time is counted in a warning.
"""

from __future__ import annotations

import atexit
import concurrent.futures.thread  # noqa: F401  (its exit hook must be registered before ours)
import logging
import os
import queue
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Literal

from .._core.schemas import RecallResult, Sample
from .._io.samples import to_sample
from .._metrics.base import Metric
from .sampling import SampleKey, check_rate, sampled
from .sinks import Sink
from .store import Record

__all__ = ["LoggerStats", "RecallLogger", "hook_exit"]

log = logging.getLogger("ragrecall")


@dataclass
class LoggerStats:
    """What the logger did with the samples handed to it, counted as it goes."""

    submitted: int = 0
    written: int = 0  # records every sink took (one per sample, however many sinks)
    dropped: int = 0
    unscorable: int = 0
    sink_errors: int = 0
    sink_writes: int = 0  # writes that succeeded, summed over the sinks
    sampled_out: int = 0  # submitted but outside ``sample_rate`` (not scored, by design)
    sample_rate: float = 1.0  # the share of submitted samples scored

    @property
    def scored_share(self) -> str:
        """The sampling, stated: "100%" or "25% sampled: 48 of 190 submitted"."""
        if self.sample_rate >= 1.0:
            return "100%"
        kept = self.submitted - self.sampled_out
        return f"{self.sample_rate:.0%} sampled: {kept} of {self.submitted} submitted"


@dataclass(frozen=True)
class _Job:
    sample: Sample
    run_id: str | None
    extra: dict[str, Any]


class RecallLogger:
    """A background scorer with a bounded queue. Use as a context manager, or call ``close``.

    Args:
        metrics: metrics to score each sample with.
        sinks: where records go.
        max_queue: samples waiting at most; then ``on_full`` applies.
        on_full: ``"block"`` (wait for room) or ``"drop"`` (count and warn).
        workers: scoring threads (a local judge serves one sample per slot).
        inline: score in the caller's thread instead (``submit`` returns when written).
        exit_timeout: seconds to wait at program exit for queued samples, if the logger was
            not closed (``None``: wait for all).
        sample_rate: the share of submitted samples to score, picked by a hash of
            ``sample_key`` (``"query"``: the query text, or ``"run_id"``), so the same queries
            are scored run after run; the others are counted in ``stats.sampled_out``, and
            each record carries the rate in ``extra["sample_rate"]``.
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
        exit_timeout: float | None = 30.0,
        sample_rate: float = 1.0,
        sample_key: SampleKey = "query",
    ):
        if not metrics:
            raise ValueError("RecallLogger needs at least one metric")
        if on_full not in ("block", "drop"):
            raise ValueError(f"on_full must be 'block' or 'drop', not {on_full!r}")
        self.metrics = list(metrics)
        self.sinks = list(sinks)
        self.on_full = on_full
        self.inline = inline
        self.exit_timeout = exit_timeout
        self.stats = LoggerStats(sample_rate=check_rate(sample_rate))
        self.sample_key = sample_key
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
        _at_exit(self)

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
        key = job.sample.user_input if self.sample_key == "query" else run_id
        chosen = sampled(key, self.stats.sample_rate)
        with self._lock:
            self.stats.submitted += 1
            self.stats.sampled_out += not chosen
        if not chosen:
            return
        if self.stats.sample_rate < 1.0:
            job.extra["sample_rate"] = self.stats.sample_rate
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
        """Flush, stop the workers and close the sinks (every one, even if one fails)."""
        if self._closed:
            return
        self.flush()
        self._closed = True
        for _ in self._threads:
            self._queue.put(None)
        for thread in self._threads:
            thread.join()
        self._close_sinks()

    def _close_at_exit(self) -> None:
        """The program is ending with this logger open: flush for up to ``exit_timeout``."""
        if self._closed:
            return
        deadline = None if self.exit_timeout is None else time.monotonic() + self.exit_timeout
        with self._queue.all_tasks_done:
            while self._queue.unfinished_tasks:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    break
                self._queue.all_tasks_done.wait(left)
            unwritten = self._queue.unfinished_tasks
        self._closed = True
        if unwritten:
            log.warning(
                "ragrecall: the program ended with %d samples of a RecallLogger not yet "
                "written (exit_timeout=%s s); call close() to wait for them",
                unwritten,
                self.exit_timeout,
            )
        self._close_sinks()

    def _close_sinks(self) -> None:
        for sink in self.sinks:
            try:
                sink.close()
            except Exception:
                with self._lock:
                    self.stats.sink_errors += 1
                log.exception("ragrecall: sink %s failed to close", type(sink).__name__)

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
        results: dict[str, RecallResult] = {}
        for metric in self.metrics:
            try:
                result = metric.score(job.sample)
            except Exception as exc:  # a missing judge model, say: still a result
                result = metric.unscorable(f"{type(exc).__name__}: {exc}")
            results[metric.name] = result
        self._write(job, results)

    def _write(self, job: _Job, results: dict[str, RecallResult]) -> None:
        sample = job.sample
        record = Record(
            key=sample.key(),
            index=-1,
            sample=sample,
            results=results,
            content=sample.content_key(),
            run_id=job.run_id,
            timestamp=datetime.now(timezone.utc),
            extra=dict(job.extra),
        )
        failed = 0
        for sink in self.sinks:
            try:
                sink.write(record)
            except Exception:
                failed += 1
                log.exception(
                    "ragrecall: sink %s failed for run %s", type(sink).__name__, job.run_id
                )
        with self._lock:
            self.stats.unscorable += sum(r.status == "unscorable" for r in results.values())
            self.stats.written += not failed
            self.stats.sink_writes += len(self.sinks) - failed
            self.stats.sink_errors += failed


# Loggers still open are flushed at program exit by a hook of threading's own exit hooks: those
# run when the main thread ends, before concurrent.futures refuses new work (registered after
# it, so run before it; LangChain runs calls through its executors) and before atexit handlers
# (the embedded judge's stop is one), while the workers' daemon threads are alive.
_open: weakref.WeakSet[RecallLogger] = weakref.WeakSet()
_hooked: set[Callable[[], None]] = set()
_hook_lock = threading.Lock()


def _at_exit(logger: RecallLogger) -> None:
    with _hook_lock:
        _open.add(logger)
    hook_exit()


def hook_exit(hook: Callable[[], None] | None = None) -> None:
    """Register the loggers' exit hook, then ``hook`` (each once): hooks run last first, so
    ``hook`` (the live scorers' close) runs while the loggers' sinks are still open."""
    with _hook_lock:
        for fn in (_flush_at_exit, hook):
            if fn is not None and fn not in _hooked:
                register = getattr(threading, "_register_atexit", None) or atexit.register
                register(fn)
                _hooked.add(fn)


def _flush_at_exit() -> None:
    for logger in list(_open):
        logger._close_at_exit()


def _forget_loggers() -> None:  # a forked child has none of its parent's worker threads
    global _open
    _open = weakref.WeakSet()


os.register_at_fork(after_in_child=_forget_loggers)
