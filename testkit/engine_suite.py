"""One conformance suite for every engine (after langchain-tests' standard suites): a test
class subclasses ``EngineConformance`` and gives a ``runner`` fixture; it inherits the checks.
The same results on the same samples with the keyword judge as the local engine; a resumed run
adds nothing twice; the budget stops each at the same count."""

from __future__ import annotations

import json
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

from ragrecall import EvaluationReport, evaluate
from ragrecall.engines import Engine, MetricSpec, factory

N = 12
KEYWORD = factory("ray_judges:keyword")  # importable on Ray workers too
# One judge call a sample (claims by rule, one attribution request): budgets are exact.
SPEC = MetricSpec("context_recall", KEYWORD, {"claims": "sentences", "strategy": "batched"})
STABLE = ("score", "status", "reason", "claims", "claim_set", "verdicts")


def rows(n: int = N) -> list[dict[str, Any]]:
    tag = uuid.uuid4().hex[:8]  # fresh samples: no claim store answers for them
    return [
        {
            "question": f"What do animals do {tag} {i}?",
            "reference": f"Cats purr {tag} {i}. Birds sing {tag} {i}.",
            "contexts": [f"Cats purr {tag} {i} loudly."]
            + ([f"Birds sing {tag} {i} at dawn."] if i % 3 else [f"Nothing {i}."]),
            "sample_id": f"s{i}",
        }
        for i in range(n)
    ]


class Runner:
    """An engine and where it keeps its results (a JSONL file, or Ray's Parquet parts)."""

    def __init__(self, engine: Engine, out: Path):
        self.engine, self.out = engine, out

    def evaluate(self, data: list[dict[str, Any]], **kw: Any) -> EvaluationReport:
        return evaluate(data, [SPEC], engine=self.engine, out=self.out, **kw)

    def stored(self) -> list[tuple[str, int]]:
        """The (key, occurrence) of every sample in the results store, as often as it is."""
        if self.engine.out_kind == "directory":
            import pyarrow.parquet as pq

            table = pq.read_table(self.out, columns=["key", "occurrence"])
            return list(zip(table["key"].to_pylist(), table["occurrence"].to_pylist(), strict=True))
        lines = [json.loads(line) for line in self.out.read_text().splitlines()]
        return [(r["key"], r["occurrence"]) for r in lines]


def stable(report: EvaluationReport) -> list[dict[str, Any]]:
    return [r.model_dump(include=set(STABLE)) for r in report.results["context_recall"]]


class EngineConformance:
    """The checks every engine passes; a subclass gives the ``runner`` fixture."""

    def test_same_results_as_the_local_engine(self, runner: Runner) -> None:
        data = rows()
        expected = evaluate(data, [SPEC], show_progress=False)
        got = runner.evaluate(data)
        assert stable(got) == stable(expected)
        assert {r.status for r in got.results["context_recall"]} == {"scored"}
        assert got.usage.calls == N and not got.budget_spent and got.resumed == 0
        assert sorted(Counter(runner.stored()).values()) == [1] * N
        assert got.usage.prompt_tokens > 0 and got.usage.completion_tokens > 0
        if runner.engine.name != "batch":  # the same judge (batch: the server's, its own counts)
            assert got.usage == expected.usage  # prompt and completion tokens apart, alike

    def test_the_budget_stops_each_at_the_same_count_and_resuming_adds_nothing_twice(
        self, runner: Runner
    ) -> None:
        data = rows()
        stopped = runner.evaluate(data, max_calls=5)
        results = stopped.results["context_recall"]
        assert stopped.budget_spent and stopped.usage.calls == 5
        assert sum(r.status == "scored" for r in results) == 5
        assert {r.reason for r in results if r.status == "not_reached"} == {
            "not scored: the budget was spent before it"
        }
        assert len(runner.stored()) == 5
        again = runner.evaluate(data)
        assert again.resumed == 5 and again.usage.calls == N - 5 and not again.budget_spent
        assert {r.status for r in again.results["context_recall"]} == {"scored"}
        stored = Counter(runner.stored())
        assert len(stored) == N and max(stored.values()) == 1  # nothing written twice
        assert runner.evaluate(data).usage.calls == 0  # all there: nothing judged again
