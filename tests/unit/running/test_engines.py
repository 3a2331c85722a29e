"""One conformance suite for every engine (local, batch, Ray): the same results on the same
samples with the keyword judge; a resumed run adds nothing twice; the budget stops each at
the same count. Batch mode runs against ``batchserver.BatchServer``, Ray on a local cluster
(2 CPUs) started here, as ``test_ray.py`` does."""

from __future__ import annotations

import json
import os
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from batchserver import BatchServer
from langchain_openai import ChatOpenAI

from ragrecall import EvaluationReport, evaluate
from ragrecall.engines import BatchEngine, Engine, LocalEngine, MetricSpec, factory

ROOT = Path(__file__).resolve().parents[3]
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


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[None]:
    import ray

    paths = [str(ROOT / "src"), str(ROOT / "testkit"), os.environ.get("PYTHONPATH", "")]
    env = {
        "PYTHONPATH": os.pathsep.join(p for p in paths if p),
        "RAGRECALL_CLAIMS_STORE": os.environ["RAGRECALL_CLAIMS_STORE"],
    }
    ray.init(
        address="local",  # a cluster of its own, never one a `ray start` left behind
        num_cpus=2,
        object_store_memory=200 * 1024**2,
        include_dashboard=False,
        runtime_env={"env_vars": env},
        log_to_driver=False,
    )
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield
    ray.shutdown()


@pytest.fixture(params=["local", "batch", pytest.param("ray", marks=pytest.mark.system)])
def runner(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Runner]:
    if request.param == "local":
        yield Runner(LocalEngine(concurrency=4), tmp_path / "out.jsonl")
    elif request.param == "batch":
        with BatchServer() as server:
            judge = ChatOpenAI(base_url=server.url, api_key="t", model="keyword", max_retries=0)
            yield Runner(BatchEngine(judge, poll_interval=0), tmp_path / "out.jsonl")
    else:
        request.getfixturevalue("ray_cluster")
        from ragrecall.ray import RayEngine

        yield Runner(RayEngine(workers=2, concurrency=8), tmp_path / "out")


def stable(report: EvaluationReport) -> list[dict[str, Any]]:
    return [r.model_dump(include=set(STABLE)) for r in report.results["context_recall"]]


def test_same_results_as_the_local_engine(runner: Runner) -> None:
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
    runner: Runner,
) -> None:
    data = rows()
    stopped = runner.evaluate(data, max_calls=5)
    results = stopped.results["context_recall"]
    assert stopped.budget_spent and stopped.usage.calls == 5
    assert sum(r.status == "scored" for r in results) == 5
    assert {r.reason for r in results if r.status == "unscorable"} == {
        "not scored: the budget was spent before it"
    }
    assert len(runner.stored()) == 5
    again = runner.evaluate(data)
    assert again.resumed == 5 and again.usage.calls == N - 5 and not again.budget_spent
    assert {r.status for r in again.results["context_recall"]} == {"scored"}
    stored = Counter(runner.stored())
    assert len(stored) == N and max(stored.values()) == 1  # nothing written twice
    assert runner.evaluate(data).usage.calls == 0  # all there: nothing judged again


async def test_the_async_and_streaming_twins_take_the_same_engine_and_store(
    tmp_path: Path,
) -> None:
    from ragrecall import aevaluate, astream

    data, out = rows(), tmp_path / "out.jsonl"
    engine = LocalEngine(concurrency=3)
    report = await aevaluate(data, [SPEC], out=out, engine=engine, max_calls=4)
    assert report.budget_spent and report.usage.calls == 4
    streamed = [s async for s in astream(data, [SPEC], out=out, engine=engine)]
    assert sorted(s.index for s in streamed) == list(range(N))  # 4 resumed, 8 scored
    again = evaluate(data, [SPEC], out=out)  # all 12 read back, none judged
    assert again.resumed == N and again.usage.calls == 0
    by_index = sorted(streamed, key=lambda s: s.index)
    assert [s.results["context_recall"] for s in by_index] == again.results["context_recall"]
