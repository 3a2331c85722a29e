"""Ray's results reach ``out`` while the run goes on, and a driver killed mid-run (SIGKILL)
then resumed pays again only for the samples in flight and those not yet written (at most
``flush_rows`` a worker). Each run is a subprocess with a local 2-CPU cluster of its own."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

pytestmark = pytest.mark.system  # local Ray clusters, subprocesses killed

ROOT = Path(__file__).resolve().parents[2]
N, WORKERS, CONCURRENCY, FLUSH_ROWS = 60, 2, 4, 2
KILLS = 3

DRIVER = (
    """
import json, sys
import ray
import ragrecall.ray as rr
ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
         object_store_memory=200 * 1024**2)
ray.data.DataContext.get_current().enable_progress_bars = False
data = [json.loads(line) for line in open(sys.argv[1])]
spec = rr.MetricSpec("context_recall", rr.factory("ray_judges:counting"), {"claims": "sentences"})
run = rr.run(data, [spec], out=sys.argv[2], workers=WORKERS, concurrency=CONCURRENCY,
             flush_rows=FLUSH, flush_seconds=0.5, batch_size=8)
print("resumed", run.resumed, "todo", run.todo, flush=True)
""".replace("WORKERS", str(WORKERS))
    .replace("CONCURRENCY", str(CONCURRENCY))
    .replace("FLUSH", str(FLUSH_ROWS))
)


def dataset(path: Path) -> Path:
    rows = [
        {
            "question": f"What does cat {i} do?",
            "reference": f"Cat {i} purrs. Cat {i} sleeps. Cat {i} eats.",
            "contexts": [f"Cat {i} purrs loudly.", f"Cat {i} sleeps all day."],
        }
        for i in range(N)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def driver(data: Path, out: Path, calls: Path) -> subprocess.Popen[bytes]:
    paths = [str(ROOT / "src"), str(ROOT / "testkit"), os.environ.get("PYTHONPATH", "")]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in paths if p),
        "RAGRECALL_TEST_CALLS": str(calls),
    }
    return subprocess.Popen(
        [sys.executable, "-c", DRIVER, str(data), str(out)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its cluster's processes die with their group
    )


def parts(out: Path) -> list[Path]:
    return sorted(out.glob("*.parquet")) if out.exists() else []


def count(calls: Path) -> int:
    return len(calls.read_bytes().splitlines()) if calls.exists() else 0


def finish(proc: subprocess.Popen[bytes]) -> str:
    output, _ = proc.communicate(timeout=300)
    text = output.decode(errors="replace")
    assert proc.returncode == 0, text[-3000:]
    return text


def test_parts_reach_out_mid_run_and_a_killed_driver_pays_again_only_in_flight(
    tmp_path: Path,
) -> None:
    data = dataset(tmp_path / "data.jsonl")
    clean_calls = tmp_path / "clean.calls"
    clean = tmp_path / "clean"
    finish(driver(data, clean, clean_calls))
    per_sample = count(clean_calls) / N
    assert per_sample >= 1
    # in flight: CONCURRENCY samples; not yet written: FLUSH_ROWS - 1 a worker
    bound = (CONCURRENCY + WORKERS * (FLUSH_ROWS - 1)) * per_sample
    worst, pause = 0.0, random.Random(32)
    for kill in range(KILLS):
        out, calls = tmp_path / f"out{kill}", tmp_path / f"calls{kill}"
        proc = driver(data, out, calls)
        deadline = time.monotonic() + 240
        while len(parts(out)) < 2 + 2 * kill and time.monotonic() < deadline:
            assert proc.poll() is None, "the run ended before its parts reached out"
            time.sleep(0.05)
        assert parts(out), "no part on disk mid-run"
        time.sleep(pause.uniform(0.0, 1.0))  # not only right after a part was written
        os.killpg(proc.pid, signal.SIGKILL)  # the driver and the cluster it started
        proc.wait()
        time.sleep(1.0)  # a write under way when the group died is renamed or never seen
        at_kill = count(calls)
        assert at_kill < count(clean_calls), "killed after the run's end"
        finish(driver(data, out, calls))
        again = count(calls) - count(clean_calls)  # paid twice: the whole minus one run
        worst = max(worst, again)
        rows = [r for p in parts(out) for r in pq.read_table(p, columns=["key"]).to_pylist()]
        counts = Counter(r["key"] for r in rows)
        assert len(counts) == N and max(counts.values()) == 1, "a sample lost or written twice"
        print(f"kill {kill}: {at_kill} calls made, {again:.0f} paid twice")
        assert again <= bound, f"kill {kill}: {again} calls paid twice, at most {bound}"
    print(f"worst case over {KILLS} kills: {worst:.0f} calls paid twice (bound {bound:.0f})")
