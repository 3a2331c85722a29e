"""The Ray engine: the run of ``evaluate`` / ``eval --engine ray`` on a Ray cluster (the
pipeline of ``_run``), its results a directory of Parquet parts, resumed from them."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import ray

from ragrecall._core.errors import SampleError
from ragrecall._core.schemas import Sample, Usage
from ragrecall._running.budget import Budget
from ragrecall._running.spec import MetricLike
from ragrecall._running.store import Record

from ..base import BlockingEngine, Outcome, RunSettings
from .gate import Limits
from .parts import FLUSH_ROWS, FLUSH_SECONDS
from .records import iter_records
from .run import RayRun, start

__all__ = ["RayEngine", "connect"]

# Seconds a cluster's address has to accept a connection: Ray itself retries an address that
# does not answer for minutes (20 tries of 5 s to connect and 30 s to ask for the cluster's id).
PROBE_SECONDS = 5.0


@dataclass(frozen=True)
class RayEngine(BlockingEngine):
    """Scores on a Ray cluster (``address``; default: the one running, else one started
    here): ``workers`` actors with ``num_cpus``/``num_gpus`` apiece, ``concurrency`` samples
    at once in all (as everywhere; split among the workers; default 8 a worker). ``rpm`` /
    ``tpm`` and the budget hold for the whole cluster; a ``Retry-After`` pauses every worker.
    Distinct references are decomposed once for the run (``decompose_once``). Metrics travel
    as names or ``MetricSpec``s (built once per worker). ``out`` is a directory of Parquet
    parts that each worker writes as its samples finish: every ``flush_rows`` samples or
    ``flush_seconds`` seconds, whichever comes first (a killed run loses only the samples in
    flight and those not yet written), resumed from."""

    workers: int = 2
    concurrency: int | None = None
    num_cpus: float = 1.0
    num_gpus: float = 0.0
    rpm: float | None = None
    tpm: float | None = None
    address: str | None = None
    batch_size: int | None = None
    decompose_once: bool = True
    flush_rows: int = FLUSH_ROWS
    flush_seconds: float = FLUSH_SECONDS

    name: ClassVar[str] = "ray"
    out_kind: ClassVar[str] = "directory"
    options: ClassVar[frozenset[str]] = frozenset(
        {
            "workers",
            "concurrency",
            "num_cpus",
            "num_gpus",
            "rpm",
            "tpm",
            "address",
            "batch_size",
            "decompose_once",
            "flush_rows",
            "flush_seconds",
        }
    )
    interrupted_note: ClassVar[str] = ""

    @property
    def per_worker(self) -> int:
        """Samples each worker scores at once."""
        return self.split(self.concurrency)

    def split(self, concurrency: int | None) -> int:
        """``concurrency`` samples at once in all, as each worker's share (8 if None)."""
        if concurrency is None:
            return 8
        return max(1, -(-concurrency // max(1, self.workers)))

    def score(
        self,
        samples: Sequence[Sample],
        metrics: Sequence[MetricLike],
        *,
        out: Path | None,
        budget: Budget,
        on_record: Callable[[Record], None],
        settings: RunSettings,
    ) -> Outcome:
        run = self.start(
            list(samples),
            metrics,
            out=out,
            max_calls=budget.max_calls,
            max_tokens=budget.max_tokens,
            repeats=settings.repeats,
            timeout=settings.timeout,
            max_retries=settings.max_retries,
            concurrency=settings.concurrency,
        )
        if run.resumed:
            settings.notify(f"resuming: {run.resumed} samples already in {out}, {run.todo} to go")
        for record in iter_records(run.results, run.metrics):
            on_record(record)
        state = run.state()
        budget.account(state["calls"], state["tokens"])
        budget.spent = budget.spent or bool(state["spent"])
        usage = Usage(**state["usage"])  # prompt and completion tokens apart, as told
        return Outcome(run.metrics, run.resumed, run.todo or 0, usage)

    def start(
        self,
        data: Any,
        metrics: Sequence[MetricLike] = ("context_recall",),
        *,
        out: str | Path | None = None,
        max_calls: int | None = None,
        max_tokens: int | None = None,
        repeats: int = 1,
        timeout: float | None = None,
        max_retries: int | None = None,
        column_map: Mapping[str, str] | None = None,
        concurrency: int | None = None,
    ) -> RayRun:
        """The pipeline started on ``data`` (a ``ray.data.Dataset``, a URI Ray reads, or
        anything ``evaluate`` takes, read once here): its results lazy until consumed, or
        read back from ``out``. ``concurrency``: the run's, over the engine's own."""
        if self.workers < 1:
            raise ValueError("the ray engine needs at least 1 worker")
        if not ray.is_initialized():
            connect(self.address)
        return start(
            data,
            metrics,
            out=out,
            workers=self.workers,
            concurrency_per_worker=self.split(
                self.concurrency if concurrency is None else concurrency
            ),
            num_cpus=self.num_cpus,
            num_gpus=self.num_gpus,
            limits=Limits(self.rpm, self.tpm, max_calls, max_tokens),
            repeats=repeats,
            timeout=timeout,
            max_retries=max_retries,
            column_map=column_map,
            batch_size=self.batch_size,
            decompose_once=self.decompose_once,
            flush_rows=self.flush_rows,
            flush_seconds=self.flush_seconds,
        )


def connect(address: str | None) -> None:
    """``ray.init(address=address)``; a cluster that cannot be reached or started raises a
    SampleError saying which and why (exit 2 on the command line: the message names the
    address, or the cluster started here), rather than Ray's minutes of retries or a trace."""
    given = address or os.environ.get("RAY_ADDRESS")  # as ray.init reads it
    where = "a local Ray cluster could not be started"
    if given == "auto":
        where = "no running Ray cluster was found (address auto)"
    elif given and given != "local":
        where = f"the Ray cluster at {given} could not be reached"
        _probe(given, where)
    try:
        ray.init(address=address)
    except Exception as err:  # Ray's ConnectionError, RuntimeError, OSError, ValueError, ...
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise SampleError(f"{where} ({reason}); {_remedy(given)}") from err


def _probe(address: str, where: str) -> None:
    """Refuse at once an address (``HOST:PORT``, ``ray://HOST:PORT``) where nothing listens."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit():
        return  # not HOST:PORT: ray.init says what is wrong with it
    try:
        socket.create_connection((host, int(port)), timeout=PROBE_SECONDS).close()
    except TimeoutError:
        raise SampleError(
            f"{where} (no answer within {PROBE_SECONDS:g} s); {_remedy(address)}"
        ) from None
    except OSError as err:
        reason = err.strerror or str(err) or type(err).__name__
        raise SampleError(f"{where} ({reason}); {_remedy(address)}") from None


def _remedy(address: str | None) -> str:
    if address not in (None, "", "auto", "local"):
        return "check --address (RayEngine(address=)): the head node's `ray start --head` prints it"
    return "start one with `ray start --head` and give its address with --address"
