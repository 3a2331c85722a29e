"""The Ray pipeline: samples -> (distinct references -> claims, joined back) -> scores, on
actor pools; results written to Parquet parts as blocks finish; a run resumed from its
output skips the samples already there.

One concern over 300 lines: the Ray pipeline, its stages read in the order they run.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import ray
import ray.data

from ragrecall._core.schemas import Sample
from ragrecall._io.samples import iter_samples
from ragrecall._judge.retry import DEFAULT_TIMEOUT
from ragrecall._running.spec import MetricLike, MetricSpec, spec_of

from ..base import identities
from .board import start_board, task_of
from .gate import Limits, start_gate
from .parts import FLUSH_ROWS, FLUSH_SECONDS, Done, done_samples, parts
from .rows import SAMPLE_SCHEMA, sample_row
from .workers import Decomposer, Scorer

__all__ = ["RayRun", "done_samples", "start"]

log = logging.getLogger("ragrecall")
LIGHT = 0.05  # CPUs a bookkeeping stage asks for, beside the actor pools that hold the CPUs


@dataclass
class RayRun:
    """A run's results (lazy until consumed, or read back from ``out``), how many samples its
    output already held, and the gate (``state()``: spent budget, calls, pauses)."""

    results: ray.data.Dataset
    metrics: list[str]
    resumed: int
    todo: int | None  # samples to score (None: not counted, a Ray-read input)
    gate: Any

    def state(self) -> dict[str, Any]:
        return dict(ray.get(self.gate.state.remote()))


def start(
    data: Any,
    metrics: Sequence[MetricLike] = ("context_recall",),
    *,
    out: str | Path | None = None,
    workers: int = 2,
    concurrency_per_worker: int = 8,
    num_cpus: float = 1.0,
    num_gpus: float = 0.0,
    limits: Limits | None = None,
    repeats: int = 1,
    timeout: float | None = None,
    max_retries: int | None = None,
    column_map: Mapping[str, str] | None = None,
    batch_size: int | None = None,
    decompose_once: bool = True,
    flush_rows: int = FLUSH_ROWS,
    flush_seconds: float = FLUSH_SECONDS,
) -> RayRun:
    specs = [spec_of(m) for m in metrics]
    names = [s.name for s in specs]
    if not specs or len(set(names)) != len(names):
        raise ValueError(f"need one or more metrics with unique names, got {names}")
    if workers < 1 or concurrency_per_worker < 1 or repeats < 1:
        raise ValueError("workers, concurrency_per_worker and repeats must be at least 1")
    if not ray.is_initialized():
        ray.init()
    limits = limits or Limits()
    gate = start_gate(limits)
    batch = batch_size or 4 * concurrency_per_worker
    done = done_samples(out, names) if out is not None else {}
    todo: int | None = None
    table: pa.Table | None = None
    if isinstance(data, ray.data.Dataset) or _remote(data):
        samples = _identified(_read(data), column_map, done, workers, batch)
    else:
        table = _local(data, column_map, done)
        todo = len(table)
    pool: dict[str, Any] = {
        "compute": ray.data.ActorPoolStrategy(size=workers),
        "num_cpus": num_cpus,
        "num_gpus": num_gpus,
        "batch_format": "pyarrow",
    }  # Ray Data restarts a lost actor and retries its batches (max_restarts=-1 by default)
    first = next((s for s in specs if s.decomposes), None)
    seeded = decompose_once and first is not None and todo is not None and todo != 0
    # A Ray-read input has no first pass (its shuffle and join failed intermittently on Ray
    # Data 2.60): the workers decompose each task once for the cluster through a board actor.
    board = None
    if decompose_once and first is not None and todo is None:
        board = start_board(hold=4 * (timeout or DEFAULT_TIMEOUT))  # a call and 3 retries
    if seeded:
        assert first is not None
        assert table is not None  # read on the driver (todo is counted only then)
        claims = _Claims(first, gate, concurrency_per_worker, batch, pool, workers, limits)
        table = claims.attached(table)
    if table is not None:
        samples = _blocks(table, batch)
    if out is not None:
        Path(out).mkdir(parents=True, exist_ok=True)
    results = samples.map_batches(
        Scorer,
        fn_constructor_args=(
            specs,
            gate,
            concurrency_per_worker,
            repeats,
            timeout,
            seeded,
            limits,
            board,
            max_retries,
            None if out is None else str(Path(out).resolve()),
            flush_rows,
            flush_seconds,
        ),
        batch_size=batch,
        **pool,
    )
    if out is not None:
        if todo != 0:  # the workers write their parts as samples finish (``_parts``)
            for _ in results.iter_batches(batch_format="pyarrow"):
                pass
        results = ray.data.read_parquet(str(out)) if parts(Path(out)) else results.limit(0)
    return RayRun(results, names, len(done), todo, gate)


def _remote(data: Any) -> bool:
    return isinstance(data, str) and "://" in data


def _read(data: Any) -> ray.data.Dataset:
    if isinstance(data, ray.data.Dataset):
        return data
    return ray.data.read_parquet(data) if ".parquet" in data else ray.data.read_json(data)


def _local(data: Any, column_map: Mapping[str, str] | None, done: Done) -> pa.Table:
    """Anything ``evaluate()`` takes, read here once (rows validated, identities as the local
    engine gives them), less the samples ``done``."""
    samples = list(iter_samples(data, column_map))
    rows = [
        sample_row(sample, key, occurrence, content, index)
        for index, (sample, ((key, occurrence), content)) in enumerate(
            zip(samples, identities(samples), strict=True)
        )
        if done.get((key, occurrence)) != content
    ]
    return pa.Table.from_pylist(rows, SAMPLE_SCHEMA)


def _blocks(table: pa.Table, batch: int) -> ray.data.Dataset:
    """``table`` in blocks of ``batch`` rows, so every actor of a pool gets work. Each block's
    metadata is read here (``from_arrow`` would send a task per block to read it, and start
    worker processes for them)."""
    blocks: ray.data.Dataset = ray.data.from_blocks(
        [table.slice(i, batch) for i in range(0, len(table), batch)] or [table]
    )
    return blocks


def _identified(
    ds: ray.data.Dataset,
    column_map: Mapping[str, str] | None,
    done: Done,
    workers: int,
    batch: int,
) -> ray.data.Dataset:
    """A Ray-read input as SAMPLE_SCHEMA rows in blocks of ``batch``: its input order is not
    known (``index`` -1), so a task's occurrences are numbered in the order of their content
    digests. As many LIGHT tasks at once as ``workers`` (uncapped, up to 1/LIGHT would start,
    each in a worker process of its own)."""

    def identify(batch: pa.Table) -> pa.Table:
        out = []
        for sample in iter_samples(batch.to_pylist(), column_map):
            out.append(sample_row(sample, sample.key(), 0, sample.content_key(), -1))
        return pa.Table.from_pylist(out, SAMPLE_SCHEMA)

    def number(group: pa.Table) -> pa.Table:
        ordered = group.sort_by([("content", "ascending")])
        counted = ordered.set_column(
            1, "occurrence", pa.array(range(1, len(ordered) + 1), pa.int64())
        )
        keep = [
            done.get((k, o)) != c
            for k, o, c in zip(
                counted["key"].to_pylist(),
                counted["occurrence"].to_pylist(),
                counted["content"].to_pylist(),
                strict=True,
            )
        ]
        return counted.filter(pa.array(keep, pa.bool_()))

    identified = ds.map_batches(
        identify,
        batch_format="pyarrow",
        num_cpus=LIGHT,
        compute=ray.data.TaskPoolStrategy(size=workers),
    )
    grouped = identified.groupby("key", num_partitions=_PARTITIONS)
    numbered = grouped.map_groups(number, batch_format="pyarrow", num_cpus=LIGHT).materialize()
    # One partition is one block, which one actor would score alone: cut into blocks of
    # ``batch`` rows, materialized (in the object store) before any actor pool holds the CPUs
    # that the shuffle and the cut need.
    blocks = max(1, -(-numbered.count() // batch))
    cut: ray.data.Dataset = numbered.repartition(blocks).materialize()
    return cut


# One reducer per shuffle: Ray Data 2.60 fails a hash-shuffle partition that gets no rows
# ("No match for FieldRef.Name(task)"), which more partitions make likely on small inputs.
_PARTITIONS = 1
_TASKS = pa.schema([("task", pa.string()), ("reference", pa.string()), ("question", pa.string())])


class _Claims:
    """Each distinct reference decomposed once for the whole run (``Decomposer`` actors), its
    claims joined back onto its samples (columns ``claims``, ``claims_judge``)."""

    def __init__(
        self,
        spec: MetricSpec,
        gate: Any,
        concurrency: int,
        batch: int,
        pool: dict[str, Any],
        workers: int,
        limits: Limits,
    ):
        self.spec, self.gate, self.concurrency = spec, gate, concurrency
        self.batch, self.pool, self.workers, self.limits = batch, pool, workers, limits

    def _decompose(self, tasks: ray.data.Dataset) -> ray.data.Dataset:
        return tasks.map_batches(
            Decomposer,
            fn_constructor_args=(self.spec, self.gate, self.concurrency, self.limits),
            batch_size=self.batch,
            **self.pool,
        )

    def attached(self, table: pa.Table) -> pa.Table:
        """A driver-side input: its distinct tasks found here, their claims brought back here
        (one list per distinct reference) and attached to its rows."""
        texts = table["sample"].to_pylist()
        tasks = [task_of(Sample.model_validate_json(t)) for t in texts]
        distinct: dict[str, dict[str, Any]] = {}
        for task, text in zip(tasks, texts, strict=True):
            if task and task not in distinct:
                sample = Sample.model_validate_json(text)
                distinct[task] = {
                    "task": task,
                    "reference": sample.reference,
                    "question": sample.user_input,
                }
        found: dict[str, tuple[Any, Any]] = {}
        if distinct:
            rows = pa.Table.from_pylist(list(distinct.values()), _TASKS)
            for part in self._decompose(_blocks(rows, self.batch)).iter_batches(
                batch_format="pyarrow"
            ):
                for row in pa.table(part).to_pylist():
                    found[row["task"]] = (row["claims"], row["claims_judge"])
        claims = [found.get(t, (None, None)) for t in tasks]
        return table.append_column(
            "claims", pa.array([c for c, _ in claims], pa.list_(pa.string()))
        ).append_column("claims_judge", pa.array([j for _, j in claims], pa.string()))
