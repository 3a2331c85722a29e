"""The engines' conformance suite (``testkit/engine_suite.py``) on the Ray engine, on a local
cluster (2 CPUs) started here."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from engine_suite import EngineConformance, Runner
from ray_cluster import local_cluster


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[None]:
    with local_cluster():
        yield


class TestRayEngine(EngineConformance):
    @pytest.fixture
    def runner(self, ray_cluster: None, tmp_path: Path) -> Runner:
        from ragrecall.ray import RayEngine

        return Runner(RayEngine(workers=2, concurrency=8), tmp_path / "out")
