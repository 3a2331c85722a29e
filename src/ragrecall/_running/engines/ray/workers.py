"""What runs on the Ray workers: a ``Decomposer`` (distinct references -> claims) and a
``Scorer`` (samples -> result rows). Each is a callable class for ``map_batches`` on an actor
pool: it builds its metrics once, then scores each batch on one long-lived event loop, with
``concurrency`` samples (or references) in flight."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa

from ragrecall._core.errors import JudgeError
from ragrecall._core.schemas import RecallResult, Sample, Usage
from ragrecall._metrics.base import Metric
from ragrecall._metrics.claims.decompose import ClaimCache, claims_key
from ragrecall._metrics.context_recall import ContextRecall
from ragrecall._metrics.estimate import run_estimator
from ragrecall._running.loop import blocking
from ragrecall._running.spec import MetricSpec
from ragrecall._running.store import Record

from ..stream import scored as stream_scores
from .board import task_of
from .gate import GateClient, Limits
from .parts import FLUSH_ROWS, FLUSH_SECONDS, PartWriter, done_samples
from .rows import RESULT_SCHEMA, result_rows

__all__ = ["CLAIMS_SCHEMA", "Decomposer", "Scorer"]

SOON = 0.05  # seconds a finished sample's spend may wait to be told to the gate with others

CLAIMS_SCHEMA = pa.schema(
    [("task", pa.string()), ("claims", pa.list_(pa.string())), ("claims_judge", pa.string())]
)


def _limited(metric: Metric[RecallResult], gate: Any, limits: Limits) -> Metric[RecallResult]:
    metric.policy = replace(metric.policy, limiter=GateClient(gate, limits.paced))
    return metric


def _timely(limits: Limits) -> bool:
    """Whether the gate must hear soon what samples spent (the token bucket, the budget),
    not only once per batch (a count)."""
    return bool(limits.tpm) or limits.budgeted


class Decomposer:
    """Claims of distinct (reference, question) tasks, by the first decomposing metric (its
    claim store is consulted first, and keeps what the judge returns)."""

    def __init__(self, spec: MetricSpec, gate: Any, concurrency: int, limits: Limits):
        self.metric = _limited(spec.build(), gate, limits)
        assert isinstance(self.metric, ContextRecall)
        self.gate, self.concurrency, self.limits = gate, concurrency, limits

    def __call__(self, batch: pa.Table) -> pa.Table:
        rows = batch.to_pylist()
        found = blocking(self._claims)(rows)
        return pa.Table.from_pylist(found, CLAIMS_SCHEMA)

    async def _claims(self, rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        slots = asyncio.Semaphore(self.concurrency)
        tally = _Tally(self.gate, _timely(self.limits))

        async def one(row: dict[str, Any]) -> dict[str, Any]:
            async with slots:
                claims, judge_id = await decompose(
                    self.metric, self.gate, self.limits, tally, row["reference"], row["question"]
                )
            return {"task": row["task"], "claims": claims, "claims_judge": judge_id}

        found = list(await asyncio.gather(*(one(r) for r in rows)))
        await tally.done()
        return found


async def decompose(
    metric: Metric[RecallResult],
    gate: Any,
    limits: Limits,
    tally: _Tally,
    reference: str,
    question: str | None,
) -> tuple[list[str] | None, str | None]:
    """A task's claims by ``metric`` (a ContextRecall; its claim store is consulted first and
    keeps what the judge returns) and the judge id they are for; ``(None, None)`` when the
    budget leaves it out or the judge fails (its samples then decompose on their own, and say
    why they failed), or when rules split it (they carry a note: not shared)."""
    assert isinstance(metric, ContextRecall)
    held = (1, 0) if limits.budgeted else (0, 0)  # a decomposition fits the budget
    if limits.budgeted and not await gate.admit.remote(*held):
        return None, None
    try:
        claim_set = await metric.aclaim_set(Sample(reference=reference, user_input=question))
    except JudgeError:
        tally.add(held, Usage())
        return None, None
    tally.add(held, claim_set.usage)
    if claim_set.source not in ("judge", "store"):
        return None, None
    return claim_set.claims, metric.judge_id()


class Scorer:
    """Result rows of a batch of samples (SAMPLE_SCHEMA, with ``claims`` when the first pass
    ran). Claims decomposed by the first pass are put in each decomposing metric's claim store
    (in memory here) before its samples are scored, so attribution is all that is left.

    With ``out``, the worker writes its results there itself as they finish (a part every
    ``flush_rows`` samples or ``flush_seconds``) and returns no rows; a batch run again
    (its actor was lost) skips the samples that already reached ``out``."""

    def __init__(
        self,
        specs: Sequence[MetricSpec],
        gate: Any,
        concurrency: int,
        repeats: int,
        timeout: float | None,
        seeded: bool,
        limits: Limits,
        board: Any = None,
        max_retries: int | None = None,
        out: str | None = None,
        flush_rows: int = FLUSH_ROWS,
        flush_seconds: float = FLUSH_SECONDS,
    ):
        self.max_retries = max_retries
        self.out = None if out is None else Path(out)
        self.flush = (flush_rows, flush_seconds)
        self.names = [s.name for s in specs]
        self.metrics = [
            _limited(s.build(ClaimCache() if seeded and s.decomposes else None), gate, limits)
            for s in specs
        ]
        self.board = board  # a Ray-read input's: claims of its tasks, cluster-wide
        self.gate, self.concurrency, self.repeats, self.timeout, self.limits = (
            gate,
            concurrency,
            repeats,
            timeout,
            limits,
        )
        self.estimate = run_estimator(self.metrics, repeats) if limits.budgeted else None

    def __call__(self, batch: pa.Table) -> pa.Table:
        rows = batch.to_pylist()
        out = blocking(self._score)(rows)
        return pa.Table.from_pylist(out, RESULT_SCHEMA)

    def _seed(self, sample: Sample, claims: list[str] | None, judge_id: str | None) -> None:
        reference = (sample.reference or "").strip()
        if not claims or not reference:
            return
        for metric in self.metrics:
            atomic = isinstance(metric, ContextRecall) and metric.claims == "atomic"
            if atomic and judge_id is not None and metric.judge_id() == judge_id:
                question = sample.user_input or ""
                metric.cache.put(claims_key(reference, question, judge_id), claims)  # type: ignore[attr-defined]

    async def _from_board(self, samples: Sequence[Sample], tally: _Tally) -> None:
        """Each distinct task of the batch: its claims from the board, or decomposed here and
        posted there when this worker is the first to take it; then seeded."""
        first = next(m for m in self.metrics if isinstance(m, ContextRecall))
        slots = asyncio.Semaphore(self.concurrency)
        tasks = {task_of(s): s for s in samples}
        tasks.pop("", None)

        async def one(task: str, sample: Sample) -> tuple[str, list[str] | None, str | None]:
            mine, (claims, judge_id) = await self.board.take.remote(task)
            if mine:
                async with slots:
                    reference = sample.reference or ""
                    claims, judge_id = await decompose(
                        first, self.gate, self.limits, tally, reference, sample.user_input
                    )
                self.board.post.remote(task, claims, judge_id)
            return task, claims, judge_id

        found = {t: (c, j) for t, c, j in await asyncio.gather(*map(one, tasks, tasks.values()))}
        for sample in samples:
            self._seed(sample, *found.get(task_of(sample), (None, None)))

    async def _score(self, rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        writer = None
        if self.out is not None:
            writer = PartWriter(self.out, *self.flush)
            done = done_samples(self.out, self.names, remove_broken=False)
            rows = [r for r in rows if done.get((r["key"], r["occurrence"])) != r["content"]]
        samples = [Sample.model_validate_json(r["sample"]) for r in rows]
        tally = _Tally(self.gate, _timely(self.limits))
        if self.board is not None:
            await self._from_board(samples, tally)
        for row, sample in zip(rows, samples, strict=True):
            self._seed(sample, row.get("claims"), row.get("claims_judge"))
        held: dict[int, tuple[int, int]] = {}
        estimate = self.estimate

        async def skip(sample: Sample) -> bool:
            """Whether the cluster's budget leaves ``sample`` out (awaited: the other samples
            in flight go on meanwhile)."""
            assert estimate is not None
            est = estimate(sample)
            need = (est.calls, est.prompt_tokens + est.completion_tokens)
            if not await self.gate.admit.remote(*need):
                return True
            held[id(sample)] = need
            return False

        out: list[dict[str, Any]] = []
        stream = stream_scores(
            samples,
            self.metrics,
            concurrency=self.concurrency,
            timeout=self.timeout,
            max_retries=self.max_retries,
            repeats=self.repeats,
            skip=skip if estimate is not None else None,
        )
        async for scored in stream:
            row = rows[scored.index]
            record = Record(
                row["key"],
                row["index"],
                scored.sample,
                scored.results,
                row["occurrence"],
                row["content"],
            )
            if writer is not None:
                writer.add(result_rows(record))
            else:
                out.extend(result_rows(record))
            used = sum((r.usage for r in scored.results.values()), Usage())
            tally.add(held.pop(id(scored.sample), (0, 0)), used)
        if writer is not None:
            writer.flush()
        await tally.done()
        return out


class _Tally:
    """What samples spent, told to the gate within ``SOON`` seconds of finishing (``timely``:
    the token bucket and the budget need it then; the samples finished meanwhile are told
    together) or once, when the batch is ``done`` (it only counts then). ``done`` waits until
    the gate has heard all of it, so its count is whole once the run's results are."""

    def __init__(self, gate: Any, timely: bool):
        self.gate, self.timely = gate, timely
        self.held, self.calls, self.tokens = (0, 0), 0, 0
        self.used = Usage()
        self.later: asyncio.TimerHandle | None = None
        self.told: Any = None  # the last settle sent (a sync actor runs one sender's in order)

    def add(self, held: tuple[int, int], used: Usage) -> None:
        self.held = (self.held[0] + held[0], self.held[1] + held[1])
        self.calls += used.calls
        self.tokens += used.prompt_tokens + used.completion_tokens
        self.used = self.used + used
        if self.timely and self.later is None:
            self.later = asyncio.get_running_loop().call_later(SOON, self.flush)

    def flush(self) -> None:
        if self.later is not None:
            self.later.cancel()
            self.later = None
        if self.held != (0, 0) or self.calls or self.tokens:
            self.told = self.gate.settle.remote(
                self.held, self.calls, self.tokens, self.used.model_dump()
            )
        self.held, self.calls, self.tokens = (0, 0), 0, 0
        self.used = Usage()

    async def done(self) -> None:
        self.flush()
        if self.told is not None:
            await self.told
