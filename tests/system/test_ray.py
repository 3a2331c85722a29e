"""ragrecall.ray on a local Ray cluster (2 CPUs) started here: the same results as
``evaluate``, each sample exactly once under actor kills and 429 storms, one rate limit for
the cluster, resumed runs, and ``eval --engine ray``."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import ray
from fakes import ScriptedJudge
from faultserver import FaultServer
from ray_cluster import local_cluster

import ragrecall.engines as engines
import ragrecall.ray as rr
from ragrecall import ClaimCache, ContextRecall, Sample, evaluate
from ragrecall.cli import main

ROOT = Path(__file__).resolve().parents[2]
KEYWORD = engines.factory("ray_judges:keyword")


@pytest.fixture(scope="module", autouse=True)
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    marker = tmp_path_factory.mktemp("ray") / "killed"
    with local_cluster(RAGRECALL_TEST_KILL=str(marker)):
        yield marker


def samples(n: int) -> list[dict[str, Any]]:
    """``n`` samples over n/4 distinct references (so decomposing once saves calls)."""
    out = []
    for i in range(n):
        r = i % (n // 4)
        contexts = [f"Note {i}: cats purr {r} loudly.", f"Birds sing {i % 3} at dawn."]
        out.append(
            {
                "question": f"What do animals do {r}?",
                "reference": f"Cats purr {r}. Birds sing {r % 3}.",
                "contexts": contexts[: 1 + i % 2],
            }
        )
    return out


def by_content(results: Any) -> dict[str, dict[str, Any]]:
    """Result rows by sample content (every test sample's is its own); each sample once."""
    rows = results.take_all()
    counts = Counter((r["key"], r["occurrence"]) for r in rows)
    assert max(counts.values()) == 1, "a sample is in the output twice"
    return {r["content"]: r for r in rows}


def test_public_names_and_the_core_never_imports_ray() -> None:
    code = "import sys, ragrecall, ragrecall.cli; print('ray' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False"]
    assert sorted(rr.__all__) == sorted(
        [
            "Limits",
            "RayEngine",
            "RayRun",
            "iter_records",
            "report",
            "run",
            "summarize",
        ]
    )


def test_the_old_names_still_work_and_warn(tmp_path: Path) -> None:
    spec = engines.MetricSpec("context_recall", KEYWORD, {"claims": "sentences"})
    with pytest.warns(DeprecationWarning, match="ragrecall.ray.evaluate is deprecated"):
        results = rr.evaluate(samples(8), [spec], out=tmp_path / "out", workers=2)
    assert len(by_content(results)) == 8
    with pytest.warns(DeprecationWarning, match="JudgeSpec is deprecated"):
        assert rr.JudgeSpec is not None
    for name in ("MetricSpec", "factory", "server"):  # one public home: ragrecall.engines
        with pytest.warns(DeprecationWarning, match=f"ragrecall.ray.{name} is deprecated"):
            assert getattr(rr, name) is getattr(engines, name)


def test_results_on_ray_equal_evaluate_and_references_decompose_once(tmp_path: Path) -> None:
    data = samples(200)
    store = str(tmp_path / "claims.sqlite")  # a store of its own: no claims from other tests
    spec = engines.MetricSpec(
        "context_recall", KEYWORD, {"strategy": "batched"}, claims_store=store
    )
    run = rr.run(data, [spec], out=tmp_path / "out", workers=2, concurrency_per_worker=8)
    got = by_content(run.results)
    local = evaluate(data, [ContextRecall(ScriptedJudge(), strategy="batched", cache=ClaimCache())])
    assert len(got) == 200
    assert run.results.schema().names == [
        "key", "occurrence", "content", "index", "metric", "score", "status", "reason",
        "claims", "claim_set", "verdicts", "usage", "judge", "sample", "result",
    ]  # fmt: skip
    for sample, result in zip(local.samples, local.results["context_recall"], strict=True):
        row = got[sample.content_key()]
        assert row["key"] == sample.key() and row["metric"] == "context_recall"
        assert Sample.model_validate_json(row["sample"]) == sample
        for field in ("score", "status", "reason", "claims", "claim_set"):
            assert row[field] == getattr(result, field), field
        assert row["verdicts"] == rr_verdicts(result)
        assert row["usage"]["calls"] == 1  # attribution only: claims came from the first pass
    # 50 distinct references decomposed once each, then one attribution call per sample
    assert run.state()["calls"] == 50 + 200
    summary = rr.summarize(run.results, ["context_recall"])
    assert summary.count == 200
    assert summary.metrics[0].mean == pytest.approx(local.mean)
    assert "<html" in rr.report(run.results, ["context_recall"])

    again = rr.run(data, [spec], out=tmp_path / "out", workers=2)
    assert (again.resumed, again.todo) == (200, 0)
    assert len(by_content(again.results)) == 200


def rr_verdicts(result: Any) -> str:
    import json

    return json.dumps([v.model_dump(mode="json") for v in result.verdicts])


def test_a_lost_part_is_scored_again_and_nothing_twice(tmp_path: Path) -> None:
    data = samples(40)
    spec = engines.MetricSpec("context_recall", KEYWORD, {"claims": "sentences"})
    out = tmp_path / "out"
    rr.run(data, [spec], out=out, workers=2, batch_size=10)
    parts = sorted(out.glob("*.parquet"))
    assert len(parts) > 1
    parts[0].write_bytes(parts[0].read_bytes()[:100])  # a write cut short
    with pytest.warns(UserWarning, match="unreadable results part removed"):
        run = rr.run(data, [spec], out=out, workers=2, batch_size=10)
    assert 0 < (run.todo or 0) < 40
    assert len(by_content(run.results)) == 40


def test_an_actor_killed_mid_run_loses_no_sample(cluster: Path, tmp_path: Path) -> None:
    data = samples(120)
    data[70]["contexts"] = [*data[70]["contexts"], "kill=me"]  # its actor dies scoring it
    spec = engines.MetricSpec(
        "context_recall", engines.factory("ray_judges:killer"), {"claims": "sentences"}
    )
    run = rr.run(data, [spec], out=tmp_path / "out", workers=2, concurrency_per_worker=4)
    assert cluster.exists(), "no actor was killed"
    got = by_content(run.results)
    assert len(got) == 120
    assert {r["status"] for r in got.values()} == {"scored"}


def test_a_429_storm_keeps_the_cluster_under_its_rate_limit(tmp_path: Path) -> None:
    rpm, n = 480, 30  # 8 requests a second for the whole cluster
    data = [
        {
            "question": f"What does cat {i} do?",
            "reference": f"Cat {i} purrs.",
            # more than the reference says, so each sample asks the judge (and gets its 429)
            "contexts": [f"Cat {i} purrs loudly. fault=rate_limit"],
        }
        for i in range(n)
    ]
    with FaultServer(retry_after=0.5, lifetime=240) as server:
        spec = engines.MetricSpec(
            "context_recall",
            engines.server(server.url, "fake"),
            {"claims": "sentences", "strategy": "batched"},
        )
        run = rr.run(
            data, [spec], out=tmp_path / "out", workers=2, concurrency_per_worker=8, rpm=rpm,
            batch_size=8,
        )  # fmt: skip
        got = by_content(run.results)
    assert len(got) == n
    assert {r["status"] for r in got.values()} == {"scored"}
    assert server.injected["rate_limit"] == n
    times = sorted(r.at for r in server.log)
    assert len(times) == 2 * n
    # measured at the server: no second holds more requests than the limit allows (+1 for a
    # window's edge); and each 429 paused everyone: no request within its Retry-After
    for i, t in enumerate(times):
        in_window = sum(1 for u in times[i:] if u - t < 1.0)
        assert in_window <= rpm / 60 + 1
    assert run.state()["pauses"] == n


def test_eval_engine_ray_gates_budgets_and_exit_codes(tmp_path: Path) -> None:
    data = tmp_path / "data.jsonl"
    import json

    data.write_text("".join(json.dumps(s) + "\n" for s in samples(40)))
    out = tmp_path / "out"
    common = [
        "eval", str(data), "--engine", "ray", "--workers", "2", "--judge-factory",
        "ray_judges:keyword", "--strategy", "batched", "--no-progress",
    ]  # fmt: skip
    assert main([*common, "--out", str(out), "--report", str(tmp_path / "r.html")]) == 0
    assert (tmp_path / "r.html").exists()
    assert main([*common, "--out", str(out), "--min-score", "0.99"]) == 1  # resumed: 40 done
    assert main([*common, "--max-calls", "5"]) == 3
    assert main([*common, "--workers", "0"]) == 2


def test_a_ray_dataset_decomposes_once_numbers_repeated_tasks_and_resumes(tmp_path: Path) -> None:
    data = samples(40) + samples(40)[:4]  # four rows twice: the same task, occurrences 1 and 2
    store = str(tmp_path / "claims.sqlite")  # a store of its own: no claims from other tests
    spec = engines.MetricSpec(
        "context_recall", KEYWORD, {"strategy": "batched"}, claims_store=store
    )
    run = rr.run(ray.data.from_items(data), [spec], out=tmp_path / "out", workers=2)
    rows = run.results.take_all()
    ids = Counter((r["key"], r["occurrence"]) for r in rows)
    assert len(rows) == 44 and max(ids.values()) == 1
    # each of the 10 tasks decomposed once across both workers (the board), then one verdict
    # call a sample
    assert run.state()["calls"] == 10 + 44
    # 10 tasks of 4 rows, four of them with a fifth (repeated) row: numbered 1..4 or 1..5
    assert sorted(Counter(k for k, _ in ids).values()) == [4] * 6 + [5] * 4
    assert {r["index"] for r in rows} == {-1}
    local = evaluate(data, [ContextRecall(ScriptedJudge(), strategy="batched", cache=ClaimCache())])
    assert sorted(r["score"] for r in rows) == sorted(
        r.score for r in local.results["context_recall"]
    )
    again = rr.run(ray.data.from_items(data), [spec], out=tmp_path / "out", workers=2)
    assert again.resumed == 44 and again.results.count() == 44
