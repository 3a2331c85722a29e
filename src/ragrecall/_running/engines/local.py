"""The local engine: samples scored concurrently in this process, each written to the
results file as it finishes, resumed from it, stopped at the budget."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import ClassVar

from ragrecall._core.schemas import Sample, Usage
from ragrecall._metrics.estimate import run_estimator

from ..budget import Budget
from ..loop import run_blocking
from ..progress import progress
from ..spec import MetricLike, build_metrics
from ..store import Record, ResultsFile
from .base import Outcome, RunSettings, identities, open_results, unique_names
from .stream import resolved, scored

__all__ = ["LocalEngine"]


@dataclass(frozen=True)
class LocalEngine:
    """Scores in this process, ``concurrency`` samples at once (``RunSettings.concurrency``
    over this; default: the judge's slots, or 8); ``out`` is a JSONL results file
    (``ragrecall eval --out``), fsynced line by line.

    A sample starts only if its estimated calls and tokens fit the budget beside what is
    spent and what the samples in flight reserved; those in flight finish."""

    concurrency: int | None = None

    name: ClassVar[str] = "local"
    out_kind: ClassVar[str] = "file"
    options: ClassVar[frozenset[str]] = frozenset({"concurrency"})
    interrupted_note: ClassVar[str] = ""

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
        """``ascore`` on ragrecall's one long-lived event loop (works inside notebooks). The
        metrics are built here, on the caller's thread, so a warning one gives as it is built
        (a deprecated name) points at the caller's line, where Python's filters show it."""
        built = build_metrics(metrics)
        run = self.ascore(
            samples, built, out=out, budget=budget, on_record=on_record, settings=settings
        )
        return run_blocking(run)

    async def ascore(
        self,
        samples: Sequence[Sample],
        metrics: Sequence[MetricLike],
        *,
        out: Path | None,
        budget: Budget,
        on_record: Callable[[Record], None],
        settings: RunSettings,
    ) -> Outcome:
        built = build_metrics(metrics)
        names = unique_names(built)
        ids = identities(samples)
        store: ResultsFile | None = None
        todo, resumed = list(range(len(samples))), 0
        if out is not None:
            store, todo, resumed = open_results(
                out, names, settings.repeats, ids, on_record, settings.notify
            )
        estimate = run_estimator(built, settings.repeats) if budget.limited else None
        held: dict[int, list[tuple[int, int]]] = {}
        asked, at_once = settings.skip, settings.concurrency

        async def skip(sample: Sample) -> bool:
            """Whether ``settings.skip`` or the budget leaves ``sample`` out (its estimate
            reserved if not)."""
            if asked is not None and await resolved(asked(sample)):
                return True
            est = estimate(sample) if estimate is not None else None
            need = (1, 0) if est is None else (est.calls, est.prompt_tokens + est.completion_tokens)
            if not budget.reserve(*need):
                return True
            held.setdefault(id(sample), []).append(need)
            return False

        usage = Usage()
        try:
            stream = scored(
                [samples[i] for i in todo],
                built,
                concurrency=self.concurrency if at_once is None else at_once,
                max_retries=settings.max_retries,
                timeout=settings.timeout,
                repeats=settings.repeats,
                skip=skip,
            )
            with progress(len(todo), settings.show_progress) as advance:
                async for done in stream:
                    index = todo[done.index]
                    (key, occurrence), content = ids[index]
                    record = Record(
                        key,
                        index,
                        done.sample,
                        done.results,
                        occurrence,
                        content,
                        timestamp=datetime.now(timezone.utc),
                    )
                    if store is not None:
                        store.append(record)
                    on_record(record)
                    spent = sum((r.usage for r in done.results.values()), Usage())
                    usage = usage + spent
                    reserved = held.get(id(done.sample), [])
                    need = reserved.pop() if reserved else (0, 0)
                    if not reserved:
                        held.pop(id(done.sample), None)
                    budget.settle(need, spent.calls, spent.prompt_tokens + spent.completion_tokens)
                    advance()
        finally:
            if store is not None:
                store.close()
        return Outcome(names, resumed, len(todo), usage)
