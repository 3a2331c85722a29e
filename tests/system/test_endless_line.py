"""A data file that is one endless line (/dev/zero): refused at the bound, not read whole
(issue 32, item 6; it reads 256 MiB first). A reference of one 30 MB line is scored in time
linear in its length (issue 43, item 13)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from ragrecall.cli import main


def test_an_endless_line_is_refused_at_the_bound_not_read_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "zero.jsonl"
    data.symlink_to("/dev/zero")  # no newline, ever: 2.9 GB were read before the bound
    assert main(["eval", str(data), "--judge-factory", "fakes:ScriptedJudge"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "zero.jsonl:1:" in err and "a line longer than 256 MiB" in err


def test_a_reference_of_one_30_mb_line_is_scored_in_linear_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """About 1 s a MB end to end (the unit tier's 1 MB line: tests/unit/io/
    test_hostile_inputs.py); 30 MB of prose, at about 6 s a MB of sentence splitting, is the
    benchmark's (benchmarks/speed/long_line.py --sizes 5 30), too slow for this tier."""
    monkeypatch.setenv("RAGRECALL_CLAIMS_STORE", str(tmp_path / "claims.db"))
    row = {"question": "q", "reference": "x" * 30_000_000, "contexts": ["x" * 1000]}
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps(row) + "\n")
    out = tmp_path / "out.jsonl"
    judge = ["--judge-factory", "fakes:ScriptedJudge", "--claim-mode", "sentences"]
    started = time.monotonic()
    code = main(["eval", str(data), *judge, "--no-progress", "--out", str(out)])
    took = time.monotonic() - started
    err = capsys.readouterr().err
    assert code == 0 and "Traceback" not in err, err
    assert len(out.read_text().splitlines()) == 1
    assert took < 120, f"{took:.1f} s for 30 MB (about 30 s when linear)"
