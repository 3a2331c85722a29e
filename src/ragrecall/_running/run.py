"""One run of samples on an engine: what ``evaluate``, its twins and ``ragrecall eval`` call.

``Run`` holds what an engine is handed (the samples, read once; the metrics; the budget; the
results store ``out``; the settings) and makes the one engine call; each record the engine
hands over goes to every listener. ``concurrency`` travels in ``RunSettings`` and only to an
engine whose ``options`` name it, so any object that meets the ``Engine`` protocol runs (the
run never rebuilds the engine).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .._core.schemas import RecallResult, Sample
from .._metrics.context_recall import ContextRecall
from .._metrics.registry import result_type
from .budget import Budget
from .engines.base import Engine, Outcome, RunSettings, identities
from .engines.local import LocalEngine
from .spec import MetricLike
from .store import Record

__all__ = ["NOT_SCORED", "Run"]

NOT_SCORED = "not scored: the budget was spent before it"


class Run:
    """``samples`` scored with ``metrics`` (default: ContextRecall()) on ``engine`` (default:
    ``LocalEngine()``) against ``budget``, written to ``out``. ``listen`` adds a listener of
    the records; ``keep`` is one that holds each record at its sample's place (``found``,
    by identity), which ``results`` reads."""

    def __init__(
        self,
        samples: Sequence[Sample],
        metrics: Sequence[MetricLike] | None = None,
        *,
        engine: Engine | None = None,
        out: str | Path | None = None,
        budget: Budget | None = None,
        settings: RunSettings | None = None,
    ):
        self.settings = settings or RunSettings()
        if self.settings.repeats < 1:
            raise ValueError("repeats must be at least 1")
        self.engine: Engine = LocalEngine() if engine is None else engine
        if self.settings.concurrency is not None and "concurrency" not in self.engine.options:
            raise ValueError(f"the {self.engine.name} engine takes no concurrency")
        self.samples = list(samples)
        self.metrics = list(metrics) if metrics else [ContextRecall()]
        self.out = None if out is None else Path(out)
        self.budget = Budget() if budget is None else budget
        self.ids = identities(self.samples)  # each sample's id and content digest
        self.where = {ident: i for i, ident in enumerate(self.ids)}
        self.found: dict[int, Record] = {}
        self.listeners: list[Callable[[Record], None]] = []

    def listen(self, listener: Callable[[Record], None]) -> None:
        """Hand every record of the run to ``listener`` too (in the order they come)."""
        self.listeners.append(listener)

    def index(self, record: Record) -> int | None:
        """The place of ``record``'s sample in ``samples`` (None: not one of them)."""
        return self.where.get((record.id, record.content))

    def keep(self, record: Record) -> None:
        index = self.index(record)
        if index is not None:
            self.found[index] = record

    def score(self) -> Outcome:
        """The engine's ``score``: blocks until the run ends."""
        return self.engine.score(self.samples, self.metrics, **self._arguments())

    async def ascore(self) -> Outcome:
        """The engine's ``ascore``."""
        return await self.engine.ascore(self.samples, self.metrics, **self._arguments())

    def results(self, names: Sequence[str]) -> dict[str, list[RecallResult]]:
        """Per metric, one result per sample from the records kept (``keep``); a sample with
        none was never reached (status ``not_reached``, reason ``NOT_SCORED``)."""
        table: dict[str, list[RecallResult]] = {name: [] for name in names}
        for index in range(len(self.samples)):
            record = self.found.get(index)
            for name, column in table.items():
                result = record.results.get(name) if record is not None else None
                column.append(result or _not_scored(name))
        return table

    def _arguments(self) -> dict[str, Any]:
        listeners = list(self.listeners)

        def hand(record: Record) -> None:
            for listener in listeners:
                listener(record)

        return {
            "out": self.out,
            "budget": self.budget,
            "on_record": hand,
            "settings": self.settings,
        }


def _not_scored(name: str) -> RecallResult:
    return result_type(name)(metric=name, score=None, status="not_reached", reason=NOT_SCORED)
