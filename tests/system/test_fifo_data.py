"""A FIFO given as the data file is refused at once, not read until its writer comes (issue
43, item 9): the reader opens it blocking, and would wait forever."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("command", ["eval", "claims"])
def test_a_fifo_as_the_data_file_is_refused_at_once(tmp_path: Path, command: str) -> None:
    fifo = tmp_path / "data.jsonl"
    os.mkfifo(fifo)
    argv = [sys.executable, "-m", "ragrecall.cli", command, str(fifo)]
    argv += ["--judge-factory", "fakes:ScriptedJudge", "--claim-mode", "sentences"]
    argv += ["--out", str(tmp_path / "out.jsonl")]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "testkit")}
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    err = " ".join(done.stderr.split())
    assert "data.jsonl" in err and "a pipe" in err and "Traceback" not in err
