"""Resume after SIGKILL: a real `ragrecall eval` process killed at random moments loses no
finished sample and never writes a duplicate or a half line.

The subprocess gets its judge with ``--judge-factory cli_signals:slow_judge``: testkit is on
its PYTHONPATH, and ``slow_judge`` is the keyword fake judge with a delay per call, so kills
land while samples are in flight.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.system  # runs killed at random points

ROOT = Path(__file__).resolve().parents[2]
N = 30


def command(data: Path, out: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "ragrecall.cli",
        "eval",
        str(data),
        "--judge-factory",
        "cli_signals:slow_judge",
        "--claim-mode",
        "sentences",
        "--out",
        str(out),
        "--concurrency",
        "4",
        "--no-progress",
    ]


def lines(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n") if path.exists() else []


def complete(path: Path) -> bytes:
    data = path.read_bytes() if path.exists() else b""
    return data[: data.rfind(b"\n") + 1]


def test_sigkill_at_random_points_loses_nothing_and_duplicates_nothing(tmp_path: Path) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text(
        "".join(
            json.dumps(
                {
                    "question": f"q{i}",
                    "ground_truth": f"Cats purr {i}. Dogs bark {i}.",
                    "contexts": [f"Cats purr {i} loudly."],
                }
            )
            + "\n"
            for i in range(N)
        )
    )
    out = tmp_path / "results.jsonl"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [
                str(ROOT / "testkit"),
                str(ROOT / "tests" / "system"),
                os.environ.get("PYTHONPATH", ""),
            ]
        ),
    }
    rng = random.Random(1234)
    kills = 0
    saved = b""
    for round_ in range(6):
        process = subprocess.Popen(
            command(data, out),
            cwd=tmp_path,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        target = len(lines(out)) + rng.randint(0, 4)
        deadline = time.monotonic() + 60
        while process.poll() is None and len(lines(out)) < target and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(rng.uniform(0, 0.3))
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
            kills += 1
        process.wait(timeout=60)
        # no loss: everything complete before is still there, as a prefix
        now = complete(out)
        assert now.startswith(saved)
        saved = now
        if round_ == 2:  # and a write torn in the middle of a line
            with out.open("ab") as f:
                f.write(b'{"key": "0123456789abcdef", "index": 7, "sam')
    assert kills >= 3
    final = subprocess.run(
        command(data, out), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert final.returncode == 0, final.stdout + final.stderr
    raw = out.read_bytes()
    assert raw.startswith(saved) and raw.endswith(b"\n")
    records = [json.loads(line) for line in raw.decode().splitlines()]
    keys = [r["key"] for r in records]
    assert len(keys) == N == len(set(keys))
    assert sorted(r["index"] for r in records) == list(range(N))
    assert all(r["results"]["context_recall"]["score"] == 0.5 for r in records)
