"""Ray's results reach ``out`` while the run goes on, and a driver killed mid-run (SIGKILL),
``KILLS`` times at seeded random points (``RAGRECALL_KILLS``: 5 by default, 20 for the target
figures), then run again, loses no sample, writes none twice, and pays again only for the
calls of the samples in flight at the kill (issue 32's target).

The test starts a local Ray cluster of its own (``ray start --head``, 2 CPUs, in a process
group it kills at the end) and each run is a driver subprocess connected to it: a kill ends
the driver only, as when the machine that submitted a job dies, and Ray ends the driver's
actors after it (their calls after the kill are counted, as a provider bills them). The
judge (``ray_judges:counting``) appends a line per call, as each call starts, to a file
every process shares: the digest of the request and the sample it is for.

Per kill: ``in flight`` is the calls made (up to the moment the killed run's actors were
gone) for samples not on disk then; ``again`` the calls of the next run whose request had
been made before; ``late`` the calls the killed run's actors made after the kill.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq
import pytest

pytestmark = pytest.mark.system  # a local Ray cluster, subprocesses killed

ROOT = Path(__file__).resolve().parents[2]
N, WORKERS, CONCURRENCY, FLUSH_ROWS = 120, 2, 4, 2
KILLS = int(os.environ.get("RAGRECALL_KILLS", "5"))
TAG = re.compile(r"zq(\d+)x")

DRIVER = (
    """
import json, sys
import ray
import ragrecall.ray as rr
from ragrecall.engines import MetricSpec, factory
ray.init(address=sys.argv[3], log_to_driver=False)
ray.data.DataContext.get_current().enable_progress_bars = False
data = [json.loads(line) for line in open(sys.argv[1])]
spec = MetricSpec("context_recall", factory("ray_judges:counting"), {"claims": "sentences"})
run = rr.run(data, [spec], out=sys.argv[2], workers=WORKERS, concurrency=CONCURRENCY,
             flush_rows=FLUSH, flush_seconds=0.5, batch_size=8)
print("resumed", run.resumed, "todo", run.todo, flush=True)
""".replace("WORKERS", str(WORKERS))
    .replace("CONCURRENCY", str(CONCURRENCY))
    .replace("FLUSH", str(FLUSH_ROWS))
)


@dataclass
class Kill:
    chain: int
    on_disk: int  # samples on disk once the killed run's actors were gone
    in_flight: int
    late: int
    written: int  # samples the killed run itself put on disk
    again: int = 0


def dataset(path: Path, chain: int) -> Path:
    rows = []
    for i in range(N):
        t = f"zq{chain * 1000 + i}x"
        rows.append(
            {
                "question": f"What does cat {t} do?",
                "reference": f"Cat {t} purrs. Cat {t} sleeps. Cat {t} eats.",
                "contexts": [f"Cat {t} purrs loudly.", f"Cat {t} sleeps all day."],
            }
        )
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def environment(calls: Path) -> dict[str, str]:
    paths = [str(ROOT / "src"), str(ROOT / "testkit"), os.environ.get("PYTHONPATH", "")]
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in paths if p),
        "RAGRECALL_TEST_CALLS": str(calls),
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_AUTH_MODE": "disabled",  # a cluster of this test's own, on this machine
    }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A local 2-CPU Ray cluster whose workers count their calls in ``calls``; its address."""
    calls, log = tmp_path / "calls.log", tmp_path / "head.log"
    port = free_port()
    command = [str(Path(sys.executable).with_name("ray")), "start", "--head", "--block"]
    command += [f"--port={port}", "--num-cpus=2", "--include-dashboard=false"]
    command += [f"--object-store-memory={200 * 1024**2}", "--disable-usage-stats"]
    with log.open("wb") as sink:
        head = subprocess.Popen(
            command,
            env=environment(calls),
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its processes die with their group
        )
    try:
        deadline = time.monotonic() + 180
        while b"Ray runtime started" not in log.read_bytes():
            assert head.poll() is None, log.read_text()[-3000:]
            assert time.monotonic() < deadline, "the Ray head did not start"
            time.sleep(0.2)
        yield f"127.0.0.1:{port}", calls
    finally:
        os.killpg(head.pid, signal.SIGKILL)
        head.wait()
        forget_cluster(port)


def forget_cluster(port: int) -> None:
    """Remove the note ``ray start`` leaves for later ``ray.init()`` calls (which would try
    to join this dead cluster) when it names ours."""
    from ray._private.utils import get_ray_address_file

    note = Path(get_ray_address_file(None))
    if note.is_file() and note.read_text().strip().endswith(f":{port}"):
        note.unlink()


def driver(data: Path, out: Path, address: str, calls: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", DRIVER, str(data), str(out), address],
        env=environment(calls),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


def parts(out: Path) -> list[Path]:
    return sorted(out.glob("*.parquet")) if out.exists() else []


def made(calls: Path) -> list[tuple[str, str]]:
    """Each call so far: (request digest, sample tag)."""
    if not calls.exists():
        return []
    lines = calls.read_text().splitlines()
    return [(line.split()[0], line.split()[1]) for line in lines if len(line.split()) == 2]


def keys(out: Path) -> list[str]:
    return [r["key"] for p in parts(out) for r in pq.read_table(p, columns=["key"]).to_pylist()]


def tags(out: Path) -> set[str]:
    rows = [r for p in parts(out) for r in pq.read_table(p, columns=["sample"]).to_pylist()]
    return {TAG.search(json.dumps(r)).group(0) for r in rows}  # type: ignore[union-attr]


def settle(calls: Path, quiet: float = 1.5, limit: float = 60.0) -> None:
    """Wait until no call is made for ``quiet`` seconds: the killed driver's actors are
    gone (Ray ends them with their owner)."""
    deadline = time.monotonic() + limit
    size, since = -1, time.monotonic()
    while time.monotonic() < deadline:
        now = calls.stat().st_size if calls.exists() else 0
        if now != size:
            size, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return
        time.sleep(0.05)


def finish(proc: subprocess.Popen[bytes]) -> str:
    output, _ = proc.communicate(timeout=600)
    text = output.decode(errors="replace")
    assert proc.returncode == 0, text[-3000:]
    return text


def test_parts_reach_out_mid_run_and_a_killed_driver_pays_again_only_in_flight(
    tmp_path: Path, cluster: tuple[str, Path]
) -> None:
    address, calls = cluster
    rng = random.Random(32)
    kills: list[Kill] = []
    runs = lost = duplicated = 0
    chain = 0
    while len(kills) < KILLS:
        chain += 1
        data = dataset(tmp_path / f"data{chain}.jsonl", chain)
        out = tmp_path / f"out{chain}"
        first = len(made(calls))
        saved: list[set[str]] = []
        last: Kill | None = None
        before: set[str] = set()
        while True:
            segment = len(made(calls))
            had = len(tags(out))
            proc = driver(data, out, address, calls)
            runs += 1
            # a kill once this run has made 1 to 16 calls, a random moment later
            target = segment + rng.randint(1, 4 * WORKERS * CONCURRENCY // 2)
            deadline = time.monotonic() + 300
            while proc.poll() is None and len(made(calls)) < target:
                assert time.monotonic() < deadline, "the run made no calls"
                time.sleep(0.02)
            time.sleep(rng.uniform(0.0, 1.0))
            if proc.poll() is not None or len(kills) >= KILLS:
                finish(proc)
                if last is not None:
                    last.again = sum(1 for k, _ in made(calls)[segment:] if k in before)
                break
            proc.send_signal(signal.SIGKILL)
            at_kill = len(made(calls))
            proc.communicate()
            settle(calls)
            if last is not None:
                last.again = sum(1 for k, _ in made(calls)[segment:at_kill] if k in before)
            now = made(calls)
            done = tags(out)
            unsaved = sum(1 for _, tag in now[first:] if tag not in done)
            kill = Kill(chain, len(done), unsaved, len(now) - at_kill, len(done) - had)
            kills.append(kill)
            saved.append(set(keys(out)))
            before = {k for k, _ in now[first:]}
            last = kill
        found = Counter(keys(out))
        duplicated += sum(c - 1 for c in found.values())
        lost += sum(1 for s in saved for k in s if k not in found)
        assert len(found) == N, f"chain {chain}: {N - len(found)} samples missing"
        assert parts(out), "no part on disk"
    total = made(calls)
    again = len(total) - len({k for k, _ in total})
    worst = max(kills, key=lambda k: (k.again - k.in_flight, k.again))
    summary = (
        f"ray: {len(kills)} kills in {runs} runs, lost {lost}, duplicated {duplicated}, "
        f"calls {len(total)} (clean {len(total) - again}, again {again}); worst kill: again "
        f"{worst.again} vs in flight {worst.in_flight}; late calls at most "
        f"{max(k.late for k in kills)}; again/in flight summed "
        f"{sum(k.again for k in kills)}/{sum(k.in_flight for k in kills)}"
    )
    print("\n" + summary)
    for kill in kills:
        print(f"  {kill}")
    assert lost == 0 and duplicated == 0
    assert sum(k.written > 0 for k in kills) >= len(kills) // 2, "parts did not reach out mid-run"
    assert all(k.again <= k.in_flight for k in kills), "paid again beyond what was in flight"
