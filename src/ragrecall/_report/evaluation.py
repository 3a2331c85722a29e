"""``EvaluationReport``: what ``evaluate`` returns (per-sample results of each metric, their
means, the judge usage and its cost, and with ``labels=`` the means corrected by people's
labels), and the ways to look at it: ``to_pandas``, ``to_html`` (the page ``ragrecall eval
--report`` writes, from the same renderer) and a notebook's display (``_repr_html_``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from .._analysis.corrected import CorrectedMean
from .._core.extras import requires
from .._core.schemas import RecallResult, Sample, Usage
from .._metrics.estimate import known_price
from .._running.engines.base import Outcome
from .._running.run import Run
from .._running.store import Record
from .eval_report import eval_report, report_display

__all__ = ["EvaluationReport", "evaluation_report"]


class EvaluationReport(BaseModel):
    """Per-sample results for each metric, their means and the judge usage."""

    samples: list[Sample]
    results: dict[str, list[RecallResult]] = Field(description="Metric name -> one per sample.")
    usage: Usage = Field(default_factory=Usage, description="What this run's judge spent.")
    elapsed_s: float = 0.0
    resumed: int = Field(0, description="Samples read back from ``out``, not scored again.")
    budget_spent: bool = Field(
        False,
        description="The budget stopped the run: the samples it never reached are "
        "``not_reached`` (``not_reached()``), not unscorable.",
    )
    corrected: dict[str, CorrectedMean] = Field(
        default_factory=dict,
        description="With ``labels=``: metric name -> its mean corrected by people's labels of "
        "whole answers (prediction-powered inference), the judge's mean and measured bias.",
    )

    @property
    def scores(self) -> dict[str, float | None]:
        """Mean score of each metric over its scored samples (None if none scored)."""
        means: dict[str, float | None] = {}
        for name, results in self.results.items():
            scored = [r.score for r in results if r.score is not None]
            means[name] = sum(scored) / len(scored) if scored else None
        return means

    @property
    def mean(self) -> float | None:
        """Mean score of the first metric."""
        return next(iter(self.scores.values()), None)

    def unscorable(self, metric: str | None = None) -> list[int]:
        """Indices of the samples a metric could not score (a judge or sample failure; not
        those a budget never reached)."""
        name = metric or next(iter(self.results))
        return [i for i, r in enumerate(self.results[name]) if r.status == "unscorable"]

    def not_reached(self) -> list[int]:
        """Indices of the samples the budget stopped the run before (no metric started)."""
        columns = list(self.results.values())
        return [
            i
            for i in range(len(self.samples))
            if all(column[i].status == "not_reached" for column in columns)
        ]

    @property
    def cost(self) -> float | None:
        """What this run's judge calls cost in USD (``usage`` at the judge's list price, the
        one the dry run uses); None when the price is not known (a local or unknown model, or
        results of more than one judge)."""
        judges = {(r.judge.provider, r.judge.model) for rs in self.results.values() for r in rs
                  if r.judge is not None}  # fmt: skip
        if len(judges) != 1:
            return None
        provider, model = judges.pop()
        price = known_price(f"{provider or 'judge'}:{model}")
        if price is None:
            return None
        u = self.usage
        return (u.prompt_tokens * price[0] + u.completion_tokens * price[1]) / 1e6

    def _records(self) -> list[Record]:
        """The samples the run reached, each as a ``Record`` at its place (``index``)."""
        skipped = set(self.not_reached())
        return [
            Record(
                key=sample.key(),
                index=i,
                sample=sample,
                results={name: column[i] for name, column in self.results.items()},
                content=sample.content_key(),
            )
            for i, sample in enumerate(self.samples)
            if i not in skipped
        ]

    def to_html(self, path: str | Path | None = None, *, title: str = "") -> str:
        """The page ``ragrecall eval --report`` writes for this run (``title``: its ``DATA``
        argument), written to ``path`` when given; returns the page."""
        page = eval_report(
            self._records(),
            list(self.results),
            title=title,
            corrected=list(self.corrected.values()),
            not_reached=len(self.not_reached()),
        )
        if path is not None:
            Path(path).write_text(page, "utf-8")
        return page

    def _repr_html_(self) -> str:
        """A notebook's display: each metric's mean with its interval and counts, the usage
        and cost, the lowest samples with their missing claims (no script)."""
        return report_display(
            self._records(),
            list(self.results),
            not_reached=len(self.not_reached()),
            usage=self.usage,
            cost=self.cost,
        )

    def to_pandas(self) -> Any:
        """One row per sample, as RAGAS gives it: the sample's own columns (``user_input``,
        ``retrieved_contexts`` as texts, ``reference``, ``response``, ids, ...; those no sample
        has are left out), then per metric its score, and ``<metric>_status``, ``_reason`` and
        ``_missing``."""
        with requires("to_pandas"):
            import pandas as pd

        given = {name for s in self.samples for name in s.model_fields_set}
        columns = [name for name in Sample.model_fields if name in given]
        rows = []
        for i, sample in enumerate(self.samples):
            row: dict[str, Any] = {name: getattr(sample, name) for name in columns}
            if "retrieved_contexts" in row:
                row["retrieved_contexts"] = [c.text for c in sample.retrieved_contexts]
            for name, results in self.results.items():
                result = results[i]
                row[name] = result.score
                row[f"{name}_status"] = result.status  # scored, unscorable or not_reached
                row[f"{name}_reason"] = result.reason
                row[f"{name}_missing"] = result.missing
            rows.append(row)
        return pd.DataFrame(rows)


def evaluation_report(
    run: Run, outcome: Outcome, corrected: Mapping[str, CorrectedMean], elapsed_s: float
) -> EvaluationReport:
    """The report of ``run`` (its records kept by ``Run.keep``) that ended in ``outcome``;
    a labelled metric's results take the split-conformal interval of its correction (from
    ``CONFORMAL_MIN_LABELS`` labelled answers)."""
    results = run.results(outcome.metrics)
    for name, c in corrected.items():
        results[name] = [c.answer_interval(r) for r in results[name]]
    return EvaluationReport(
        samples=run.samples,
        results=results,
        usage=outcome.usage,
        elapsed_s=elapsed_s,
        resumed=outcome.resumed,
        budget_spent=run.budget.spent,
        corrected=dict(corrected),
    )
