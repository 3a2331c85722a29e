"""``eval --engine ray`` where no cluster can be had: an ``--address`` where nothing listens
(Ray itself retries it for minutes) and a local cluster that cannot start (its temporary folder
is a file) each end at once with exit 2 and one line saying what failed and where, never the
bug code (5) or a traceback (issue 43, item 12)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.system  # a Ray process started, or refused

ROOT = Path(__file__).resolve().parents[2]


def run_eval(tmp_path: Path, *more: str, **extra: str) -> subprocess.CompletedProcess[str]:
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"reference": "Cats purr.", "contexts": ["Cats purr."]}) + "\n")
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "testkit"), env.get("PYTHONPATH", "")])
    argv = [sys.executable, "-m", "ragrecall.cli", "eval", str(data), "--engine", "ray"]
    argv += ["--judge-factory", "fakes:ScriptedJudge", "--claim-mode", "sentences"]
    argv += ["--no-progress", "--out", str(tmp_path / "out"), *more]
    return subprocess.run(
        argv, cwd=tmp_path, env={**env, **extra}, capture_output=True, text=True, timeout=60
    )


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port  # closed again: nothing listens there


def test_an_address_where_nothing_listens_is_exit_2_at_once(tmp_path: Path) -> None:
    address = f"127.0.0.1:{closed_port()}"
    started = time.monotonic()
    done = run_eval(tmp_path, "--address", address)
    assert done.returncode == 2, done.stderr
    assert time.monotonic() - started < 30
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr
    assert f"the Ray cluster at {address} could not be reached" in errors[0]
    assert "--address" in errors[0]
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr


def test_a_local_cluster_that_cannot_start_is_exit_2(tmp_path: Path) -> None:
    not_a_folder = tmp_path / "ray-tmp"
    not_a_folder.write_text("a file where Ray wants its temporary folder")
    done = run_eval(tmp_path, RAY_TMPDIR=str(not_a_folder))
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr
    assert "a local Ray cluster could not be started" in errors[0]
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
