"""A Ray run's output directory is a run's results like a results file: ``read_records`` reads
the same records from both, and ``compare``, ``review`` and ``calibrate`` take either (a local
Ray cluster started here)."""

from __future__ import annotations

import csv
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import ray
from animals import rows, truth

from ragrecall.calibration import CalibrationProfile
from ragrecall.cli import main
from ragrecall.engines import Record, read_records

pytestmark = pytest.mark.system  # a local Ray cluster

ROOT = Path(__file__).resolve().parents[2]
JUDGE = ["--judge-factory", "fakes:LogprobJudge", "--strategy", "per_claim", "--no-progress"]


@pytest.fixture(scope="module", autouse=True)
def cluster() -> Iterator[None]:
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


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The same 30 samples scored locally into a results file and on Ray into a directory."""
    folder = tmp_path_factory.mktemp("runs")
    data = folder / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows(30)))
    local, on_ray = folder / "local.jsonl", folder / "ray"
    assert main(["eval", str(data), *JUDGE, "--out", str(local)]) == 0
    ray_args = ["--engine", "ray", "--workers", "2", "--out", str(on_ray)]
    assert main(["eval", str(data), *JUDGE, *ray_args]) == 0
    assert list(on_ray.glob("*.parquet"))
    return local, on_ray


def scored(record: Record) -> tuple[object, ...]:
    """All of a record but what differs between engines: the calls (Ray decomposes each
    reference once for the run) and the time they took."""
    result = record.results["context_recall"].model_dump(exclude={"usage", "elapsed_s"})
    return (record.index, record.content, record.sample, result)


def test_the_directory_reads_as_the_same_records(runs: tuple[Path, Path]) -> None:
    local, on_ray = runs
    a = {r.id: r for r in read_records(local)}
    b = read_records(on_ray)
    assert [r.index for r in b] == list(range(30))  # in input order
    assert {r.id for r in b} == set(a) and len(b) == 30
    for record in b:
        assert scored(record) == scored(a[record.id])
    assert {r.score("context_recall") for r in b} == {0.0, 1 / 3, 2 / 3}


def test_compare_a_results_file_with_a_ray_directory(
    runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    local, on_ray = runs
    assert main(["compare", str(local), str(on_ray), "--fail-if-worse"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"samples A / B / paired\s*\S\s*30 / 30 / 30", out)
    assert re.search(r"mean difference B - A\s*\S\s*\+0\.000\s+\[\+0\.000, \+0\.000\]", out)
    assert re.search(r"improved / worse / same\s*\S\s*0 / 0 / 30", out)


def review(results: Path, folder: Path) -> list[dict[str, str]]:
    argv = ["review", str(results), "--out", str(folder), "--uncertain", "10", "--random", "15"]
    assert main(argv) == 0
    return list(csv.DictReader((folder / "review.csv").open()))


def test_review_and_calibrate_take_a_ray_directory(runs: tuple[Path, Path], tmp_path: Path) -> None:
    local, on_ray = runs
    table = review(on_ray, tmp_path / "ray")
    assert [r["pick"] for r in table] == ["uncertain"] * 10 + ["random"] * 15
    assert table == review(local, tmp_path / "local")  # the same picks as from the file
    for r in table:
        r["label"] = "supported" if truth(r["claim"], r["sample_id"]) else "not supported"
    labels = tmp_path / "labels.csv"
    with labels.open("w", newline="") as f:
        writer = csv.DictWriter(f, list(table[0]))
        writer.writeheader()
        writer.writerows(table)
    profiles = []
    for results in (on_ray, local):
        out = tmp_path / f"{results.name}.json"
        argv = ["calibrate", str(labels), "--prior-shift", str(results), "--out", str(out)]
        assert main(argv) == 0
        profiles.append(CalibrationProfile.load(out))
    assert profiles[0].labels == 25
    assert profiles[0] == profiles[1]  # shifted to the same P(supported) of every claim
