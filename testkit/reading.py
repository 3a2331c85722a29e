"""What a data file reads as: the chunks' texts of its samples, and how many samples
``ragrecall eval --dry-run`` counts in it (for the writers' tests, unit and system)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ragrecall import Sample
from ragrecall.cli import main


def texts(samples: list[Sample]) -> list[list[str]]:
    return [[c.text for c in s.retrieved_contexts] for s in samples]


def dry_run_samples(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """How many samples ``ragrecall eval PATH --dry-run`` counts, and its stderr."""
    assert main(["eval", str(path), "--claim-mode", "sentences", "--dry-run"]) == 0
    out, err = capsys.readouterr()
    found = re.search(r"samples\s+│\s+(\d+)", out)
    assert found, out
    return int(found[1]), err
