"""ragrecall.ray with the embedded judge on a local Ray cluster (2 CPUs, two workers): the
example dataset scores as ``evaluate`` scores it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from ray_cluster import local_cluster

import ragrecall.ray as rr
from ragrecall import evaluate

pytestmark = pytest.mark.system  # a local Ray cluster too

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", autouse=True)
def cluster() -> Iterator[None]:
    with local_cluster():
        yield


def test_the_example_dataset_with_the_embedded_judge_on_two_workers(tmp_path: Path) -> None:
    example = ROOT / "src" / "ragrecall" / "data" / "example.jsonl"
    local = evaluate(str(example))
    run = rr.run(str(example), ["context_recall"], out=tmp_path / "out", workers=2)
    summary = rr.summarize(run.results, ["context_recall"])
    assert summary.count == len(local.samples)
    assert summary.metrics[0].unscorable == 0
    assert summary.metrics[0].mean == pytest.approx(local.mean, abs=0.15)
