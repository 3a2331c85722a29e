"""Live scoring of the retrievals that have no reference: ``LiveScorer``.

The adapters hand it each retrieval whose query has no known reference. ``offer`` picks the
share ``sample_rate`` (a hash of the key: the same queries run after run), then puts the
retrieval on a bounded queue and returns: it never blocks and never raises. When the queue
is full the retrieval is dropped and counted. One worker thread builds the sample, scores it
with a metric that needs no reference (``Sufficiency`` by name, ``"sufficiency"``), each
judge call held to ``max_calls_per_minute``, and writes one ``Record`` to the sinks the
referenced retrievals' logger writes to, its ``extra`` saying ``no_reference`` and which
metric scored it. While the budget holds the worker back, retrievals wait in the queue, and
are dropped (counted) once it is full. ``stats`` can be read at any time.

``close`` (and program exit, for a scorer left open) waits for the queue up to a timeout;
what is still queued then is counted in ``abandoned``, and the worker stops, even when it
waits for the budget. ``live_scorer`` makes one from an adapter's arguments.

One concern over 300 lines: the live scorer, its counters and how an adapter makes one.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any

from .._core.schemas import RecallResult, Sample
from .._metrics.base import Metric, MetricOptions
from .._metrics.registry import metric_class
from . import logger as _logger
from .pace import PerMinute, check_args
from .sampling import sampled
from .sinks import Sink
from .store import Record

__all__ = ["LiveScorer", "LiveStats", "live_scorer", "no_reference_metric"]

log = logging.getLogger("ragrecall")

# Fields every retrieval has, with or without a reference.
_UNREFERENCED_FIELDS = frozenset({"user_input", "retrieved_contexts"})

# A sample, or what builds it (on the worker: the caller's cost stays a put).
SampleSource = Sample | Callable[[], Sample]


@dataclass
class LiveStats:
    """Counts of the unreferenced retrievals, as they go. ``offered`` splits into
    ``skipped_by_sampling`` and ``sampled``; every sampled one ends ``scored``,
    ``unscorable`` (the judge failed: the record says why), ``dropped`` (the queue was full:
    the judge or the budget fell behind) or ``abandoned`` (still queued when the scorer
    closed), or is ``pending``: none is counted twice."""

    offered: int = 0
    skipped_by_sampling: int = 0
    sampled: int = 0
    scored: int = 0
    unscorable: int = 0
    dropped: int = 0
    abandoned: int = 0
    judge_calls: int = 0  # every attempt sent to the judge, retries included
    sink_errors: int = 0
    sample_rate: float = 1.0
    max_calls_per_minute: int | None = None

    @property
    def pending(self) -> int:
        """Queued or being scored now."""
        done = self.scored + self.unscorable + self.dropped + self.abandoned
        return self.sampled - done


def no_reference_metric(
    name: str, like: Sequence[Metric[RecallResult]] = ()
) -> Metric[RecallResult]:
    """The metric ``name`` (a registered one that needs no reference), with the judge of the
    first judge-using metric of ``like`` (the embedded judge when none), resolved on first use.
    ValueError naming ``no_reference`` for an unknown name or a metric that needs a
    reference."""
    try:
        cls = metric_class(name)
    except ValueError as err:
        raise ValueError(f"no_reference={name!r}: {err}, or 'skip'") from None
    short = [need for need in cls.needs if not _UNREFERENCED_FIELDS.intersection(need)]
    if short:
        raise ValueError(
            f"no_reference={name!r}: that metric needs {' or '.join(short[0])}, which a "
            "retrieval without a reference does not have; name one that needs only the "
            "question and the contexts ('sufficiency'), or 'skip'"
        )
    judges = [m for m in like if m.uses_judge]
    judge = (judges[0]._judge or judges[0]._judge_spec) if judges else None
    return cls.from_options(judge, MetricOptions())


def live_scorer(
    no_reference: str,
    logger: _logger.RecallLogger | None,
    *,
    sample_rate: float,
    max_calls_per_minute: int | None,
    max_queue: int,
) -> LiveScorer | None:
    """What an adapter's arguments ask for: None for ``"skip"`` or no logger; else a scorer
    with the metric ``no_reference`` (the judge of ``logger``'s metrics) writing to
    ``logger``'s sinks. ValueError naming the argument."""
    LiveScorer.check(
        sample_rate=sample_rate, max_calls_per_minute=max_calls_per_minute, max_queue=max_queue
    )
    if not isinstance(no_reference, str):
        raise ValueError(f"no_reference must be a metric name or 'skip', not {no_reference!r}")
    if no_reference == "skip" or logger is None:
        return None
    return LiveScorer(
        no_reference_metric(no_reference, logger.metrics),
        logger.sinks,
        sample_rate=sample_rate,
        max_calls_per_minute=max_calls_per_minute,
        max_queue=max_queue,
    )


@dataclass(frozen=True)
class _Job:
    source: SampleSource
    run_id: str | None
    extra: dict[str, Any]


class LiveScorer:
    """Scores retrievals without a reference off the request path (see the module).

    Args:
        metric: a metric that needs no reference (``no_reference_metric("sufficiency")``).
        sinks: where records go: the referenced retrievals' logger's (``logger.sinks``).
        sample_rate: the share of offered retrievals to score, in [0, 1], by a hash of the
            key ``offer`` is given.
        max_calls_per_minute: judge calls allowed in any minute (None: no limit), every
            attempt counted.
        max_queue: retrievals waiting at most; then an offered one is dropped and counted.
        exit_timeout: seconds to wait at program exit for the queue, if not closed.
    """

    def __init__(
        self,
        metric: Metric[RecallResult],
        sinks: Sequence[Sink],
        *,
        sample_rate: float = 1.0,
        max_calls_per_minute: int | None = 60,
        max_queue: int = 1000,
        exit_timeout: float = 5.0,
    ):
        check_args(
            sample_rate=sample_rate, max_calls_per_minute=max_calls_per_minute, max_queue=max_queue
        )
        self.metric = metric
        self.sinks = sinks  # the caller's list, shared: sinks added later are written too
        self.exit_timeout = exit_timeout
        self._stats = LiveStats(sample_rate=sample_rate, max_calls_per_minute=max_calls_per_minute)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._policy = metric.policy
        if max_calls_per_minute is not None:
            limiter = PerMinute(max_calls_per_minute, self._stop)
            self._policy = replace(metric.policy, limiter=limiter)
        self._queue: queue.Queue[_Job | None] = queue.Queue(maxsize=max_queue)
        self._closed = False
        self._thread = threading.Thread(target=self._work, name="ragrecall-live", daemon=True)
        self._thread.start()
        _open.add(self)
        _logger.hook_exit(_close_at_exit)  # after the loggers' hook: runs before it

    check = staticmethod(check_args)  # ValueError naming the option out of range

    @property
    def stats(self) -> LiveStats:
        """A snapshot of the counts."""
        with self._lock:
            return replace(self._stats)

    def offer(
        self,
        key: str | None,
        sample: SampleSource,
        *,
        run_id: str | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> bool:
        """Queue a retrieval for scoring when it is in the sampled share and there is room;
        whether it was queued. Never blocks, never raises."""
        rate = self._stats.sample_rate
        chosen = not self._closed and sampled(key, rate)
        with self._lock:
            self._stats.offered += 1
            self._stats.skipped_by_sampling += not chosen
            self._stats.sampled += chosen
        if not chosen:
            return False
        info = {**(extra or {}), **({"sample_rate": rate} if rate < 1.0 else {})}
        try:
            self._queue.put_nowait(_Job(sample, run_id, info))
        except queue.Full:
            with self._lock:
                self._stats.dropped += 1
            return False
        return True

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until the queue is scored and written (at most ``timeout`` seconds); whether
        it was."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._queue.all_tasks_done:
            while self._queue.unfinished_tasks:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._queue.all_tasks_done.wait(left)
        return True

    def close(self, timeout: float | None = 30.0) -> None:
        """Flush for up to ``timeout`` seconds (None: all), then stop the worker, even in a
        wait for the budget; what was still queued is counted in ``abandoned``."""
        if self._closed:
            return
        self.flush(timeout)
        self._closed = True
        self._stop.set()
        while True:
            try:
                job = self._queue.get_nowait()
            except queue.Empty:
                break
            with self._lock:
                self._stats.abandoned += job is not None
            self._queue.task_done()
        with contextlib.suppress(queue.Full):  # an offer raced the close: stops at its next
            self._queue.put(None, timeout=1.0)
        self._thread.join(1.0 if timeout is None else max(timeout, 1.0))
        _open.discard(self)

    def __enter__(self) -> LiveScorer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _work(self) -> None:
        while True:
            job = self._queue.get()
            try:
                if job is None:
                    return
                if self._stop.is_set():
                    with self._lock:
                        self._stats.abandoned += 1
                    continue
                self._process(job)
            except Exception:  # never let the worker die: count and go on
                log.exception("ragrecall: live scoring failed for run %s", job and job.run_id)
            finally:
                self._queue.task_done()

    def _process(self, job: _Job) -> None:
        name = self.metric.name
        sample = Sample()
        try:
            sample = job.source() if callable(job.source) else job.source
            result = self.metric.score(sample, self._policy)
        except Exception as exc:  # a sample that cannot be built, a missing judge model
            result = self.metric.unscorable(f"{type(exc).__name__}: {exc}")
        if self._stop.is_set():  # closed while it waited for the budget: not a result
            with self._lock:
                self._stats.abandoned += 1
            return
        record = Record(
            key=sample.key(),
            index=-1,
            sample=sample,
            results={name: result},
            content=sample.content_key(),
            run_id=job.run_id,
            timestamp=datetime.now(timezone.utc),
            extra={**job.extra, "no_reference": True, "metric": name},
        )
        failed = 0
        for sink in list(self.sinks):
            try:
                sink.write(record)
            except Exception:
                failed += 1
                log.exception(
                    "ragrecall: sink %s failed for run %s", type(sink).__name__, job.run_id
                )
        with self._lock:
            self._stats.judge_calls += result.usage.calls if result.usage else 0
            self._stats.sink_errors += failed
            if result.status == "unscorable":
                self._stats.unscorable += 1
            else:
                self._stats.scored += 1


# Scorers still open at program exit are closed by a hook run before the loggers' (which
# closes the sinks): each waits up to its exit_timeout, then counts the rest as abandoned.
_open: weakref.WeakSet[LiveScorer] = weakref.WeakSet()


def _close_at_exit() -> None:
    for scorer in list(_open):
        scorer.close(scorer.exit_timeout)


def _forget_scorers() -> None:  # a forked child has none of its parent's worker threads
    global _open
    _open = weakref.WeakSet()


os.register_at_fork(after_in_child=_forget_scorers)
