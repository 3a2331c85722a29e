"""Every file ragrecall reads, damaged at random (property-based, Hypothesis): data files
(JSONL, JSON, CSV, Parquet), traces (OTLP JSON, LangSmith runs), claims files, labels (JSONL,
CSV), calibration profiles and results files. Each generated file goes through the command
that reads it, in this process (``ragrecall.cli.main``: no subprocess per input), and:

- never exits 5 ("a bug in ragrecall") and never prints a traceback or "internal error";
- when it is refused (exit 2), the message names the file.

A valid file of each kind is the seed; a generated input changes it by structure (a value
replaced by another of any JSON type, a key dropped, a level nested thousands deep, NaN and
infinities, numbers as text) and by bytes (cut short, a line doubled or joined, bytes that
are not UTF-8, control characters). ``test_fuzz_every_file_kind`` runs a few dozen inputs of
each kind (seconds); tests/system/test_fuzz_files_at_scale.py 1,250 of each, 10,000 in all.
The harness is ``testkit/file_fuzz.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from file_fuzz import KINDS, fuzz, make_seeds


@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return make_seeds(tmp_path_factory.mktemp("seeds"))


@pytest.mark.parametrize("kind", KINDS)
def test_fuzz_every_file_kind(
    kind: str, seeds: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGRECALL_CLAIMS_STORE", str(tmp_path / "claims.db"))
    fuzz(kind, 25, seeds, tmp_path)
