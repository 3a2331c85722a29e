"""Every file ragrecall reads, damaged at random at scale: 1,250 generated inputs of each kind,
10,000 in all (the harness and what it checks: ``testkit/file_fuzz.py``)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from file_fuzz import KINDS, SEEN, fuzz, make_seeds


@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return make_seeds(tmp_path_factory.mktemp("seeds"))


@pytest.mark.parametrize("kind", KINDS)
def test_fuzz_every_file_kind_at_scale(
    kind: str, seeds: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGRECALL_CLAIMS_STORE", str(tmp_path / "claims.db"))
    fuzz(kind, math.ceil(10_000 / len(KINDS)), seeds, tmp_path)
    print(sorted((k, v) for k, v in SEEN.items() if k.startswith(kind)))
