"""Past one process: evaluate() against ragrecall.ray, on a judge that answers in fixed time.

    python -m benchmarks.speed.scale_ray [--samples 5000] [--delay 0.2] [--concurrency 32 64]
        [--workers 1 2 4] [--cpus N] [--rpm R] [--tpm T] [--max-calls C] [--out DIR]
        [--input list|dataset] [--summary out.json]

A local OpenAI-compatible server (``throughput.py``'s, a child process on loopback) answers
every chat completion after ``--delay`` seconds. ``--samples`` samples of one claim and one
chunk each (one judge call per sample) are scored by ``ragrecall.evaluate`` in this process at
each ``--concurrency``, then by ``ragrecall.ray`` (a local cluster of ``--cpus`` CPUs) with
each ``--workers`` count at the largest concurrency in total (split evenly across workers, CPUs
likewise). Reported: samples/s, efficiency (ideal = requests x delay / concurrency), overhead
per sample ((wall - ideal) / samples, Ray's actor start-up included), driver peak RSS (before
and after each run) and each worker's peak RSS (sampled every 0.2 s), and CPU ms per sample of
each process group (this one, the judge server, the scoring workers, Ray's other workers and
Ray's own processes; ``cores busy``: their CPU seconds over the wall time), and for Ray the
seconds to its first result and the rate and CPU from there on (start-up left out). ``--rpm``,
``--tpm``, ``--max-calls`` give the Ray runs a cluster limit or budget (set them too high to
bind: the cost of the gate); ``--out`` has them write Parquet parts under ``DIR/workers-N``
and read them back (their first result then comes once all are written); ``--input dataset``
hands them a ``ray.data.Dataset`` (identified and numbered by Ray) instead of a list.
Targets (issue 18): Ray with 2 workers >= 1.6x one process at the same concurrency; overhead
< 5 ms a sample.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import resource
import shutil
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psutil

from benchmarks._common import ROOT, commit, write_json
from benchmarks.speed.throughput import delayed_server, openai_judge, rows, server_stats


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def local_run(base_url: str, count: int, concurrency: int, delay: float) -> dict[str, Any]:
    from ragrecall import ContextRecall, aevaluate

    async def run() -> int:
        judge = openai_judge(base_url)
        metric = ContextRecall(judge, claims="sentences", window_tokens=4096)
        report = await aevaluate(
            rows(count), [metric], concurrency=concurrency, show_progress=False, max_retries=0
        )
        await judge.root_async_client.close()
        return sum(r.score is not None for r in report.results["context_recall"])

    server_stats(base_url, reset=True)
    with Watch() as watch:
        start = time.perf_counter()
        scored = asyncio.run(run())
        seconds = time.perf_counter() - start
    return summary(
        "evaluate()",
        1,
        concurrency,
        count,
        scored,
        seconds,
        base_url,
        delay,
        {"cpu_s": watch.cpu()},
    )


class Watch:
    """While a run goes on (sampled every 0.2 s): each Ray scoring worker's peak RSS, and the
    CPU seconds spent by this process, the judge server, the scoring workers, Ray's other
    workers (``ray::...``: the gate, idle workers, Ray Data tasks) and Ray's own processes
    (raylet, GCS, agents), all descendants of this process."""

    def __init__(self) -> None:
        self.peaks: dict[int, float] = {}
        self.first: dict[int, float] = {}
        self.last: dict[int, tuple[str, float]] = {}
        self.names: dict[int, str] = {}
        self.marked: dict[int, float] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self.me = psutil.Process()
        self._poll(start=True)

    def _group(self, proc: psutil.Process) -> str:
        if proc.pid == self.me.pid:
            return "driver"
        cmd = " ".join(proc.cmdline())
        if "--serve" in cmd and "throughput.py" in cmd:
            return "server"
        if "MapBatches(Scorer)" in cmd:
            return "scorer"
        return "ray workers" if cmd.startswith("ray::") else "ray system"

    def _poll(self, start: bool = False) -> None:
        with self._lock:
            self._poll_locked(start)

    def _poll_locked(self, start: bool) -> None:
        for proc in [self.me, *self.me.children(recursive=True)]:
            try:
                with proc.oneshot():
                    times = proc.cpu_times()
                    cpu = times.user + times.system
                    group = self._group(proc)
                    self.names[proc.pid] = " ".join(proc.cmdline())[:60]
                    rss = proc.memory_info().rss / 2**20
            except psutil.Error:
                continue
            self.first.setdefault(proc.pid, cpu if start else 0.0)
            self.last[proc.pid] = (group, cpu)
            if group == "scorer":
                self.peaks[proc.pid] = max(self.peaks.get(proc.pid, 0), rss)

    def _sample(self) -> None:
        while not self._stop.wait(0.2):
            self._poll()

    def mark(self) -> None:
        """Note every process's CPU time now (``cpu(since_mark=True)`` counts from here)."""
        self._poll()
        with self._lock:
            self.marked = {pid: cpu for pid, (_, cpu) in self.last.items()}

    def cpu(self, since_mark: bool = False) -> dict[str, float]:
        """CPU seconds by group since the watch began (or since ``mark``)."""
        out: dict[str, float] = {}
        for pid, (group, cpu) in self.last.items():
            base = self.marked.get(pid, self.first[pid]) if since_mark else self.first[pid]
            out[group] = out.get(group, 0.0) + cpu - base
        return out

    def by_process(self, until_mark: bool = False) -> dict[str, float]:
        """CPU seconds by process (its command line, cut), the busiest first; until ``mark``
        (the start-up) or all."""
        out: dict[str, float] = {}
        for pid, (_, cpu) in self.last.items():
            name = self.names.get(pid, "?")
            end = self.marked.get(pid, self.first[pid]) if until_mark else cpu
            out[name] = out.get(name, 0.0) + end - self.first[pid]
        return dict(
            sorted(((k, round(v, 2)) for k, v in out.items() if v >= 0.05), key=lambda kv: -kv[1])
        )

    def __enter__(self) -> Watch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._poll()


def ray_run(
    base_url: str,
    count: int,
    workers: int,
    total: int,
    cpus: float,
    delay: float,
    args: argparse.Namespace,
) -> dict[str, Any]:
    import ray

    import ragrecall.ray as rr

    judge = functools.partial(openai_judge, base_url)
    spec = rr.MetricSpec(
        "context_recall", judge, {"claims": "sentences", "window_tokens": 4096, "max_retries": 0}
    )
    server_stats(base_url, reset=True)
    with Watch() as watch:
        start = time.perf_counter()
        out = None if args.out is None else args.out / f"workers-{workers}"
        if out is not None and out.exists():
            shutil.rmtree(out)
        data: Any = rows(count)
        if args.input == "dataset":  # read by Ray: identified on the workers, no input order
            data = ray.data.from_items(data)
        engine = rr.RayEngine(
            workers=workers,
            concurrency=total,
            num_cpus=cpus / workers,
            batch_size=4 * total // workers,
            rpm=args.rpm,
            tpm=args.tpm,
        )
        results = engine.start(data, [spec], max_calls=args.max_calls, out=out).results
        scored = 0
        seen: set[tuple[str, int]] = set()
        first, first_rows = 0.0, 0
        for batch in results.iter_batches(batch_format="pyarrow"):
            if not first:
                watch.mark()
                first, first_rows = time.perf_counter(), batch.num_rows
            for key, occurrence, status in zip(
                batch["key"].to_pylist(),
                batch["occurrence"].to_pylist(),
                batch["status"].to_pylist(),
                strict=True,
            ):
                seen.add((key, occurrence))
                scored += status == "scored"
        seconds = time.perf_counter() - start
    extra = {
        "distinct_samples": len(seen),
        "start_s": first - start,
        "steady_samples_per_s": (count - first_rows) / (start + seconds - first),
        "steady_cpu_s": watch.cpu(since_mark=True),
        "steady_samples": count - first_rows,
        "worker_peak_rss_mb": sorted(round(v) for v in watch.peaks.values()),
        "cpu_s": watch.cpu(),
        "cpu_s_by_process": watch.by_process(),
        "start_cpu_s_by_process": watch.by_process(until_mark=True),
    }
    return summary("ragrecall.ray", workers, total, count, scored, seconds, base_url, delay, extra)


def summary(
    tool: str,
    workers: int,
    concurrency: int,
    count: int,
    scored: int,
    seconds: float,
    base_url: str,
    delay: float,
    extra: dict[str, Any],
) -> dict[str, Any]:
    stats = server_stats(base_url)
    ideal = stats["requests"] * delay / concurrency
    return {
        "tool": tool,
        "workers": workers,
        "concurrency": concurrency,
        "samples": count,
        "scored": scored,
        "requests": stats["requests"],
        "max_in_flight": stats["max_in_flight"],
        "seconds": seconds,
        "samples_per_s": count / seconds,
        "ideal_s": ideal,
        "efficiency": ideal / seconds,
        "overhead_ms_per_sample": (seconds - ideal) / count * 1e3,
        "driver_peak_rss_mb": round(peak_rss_mb()),
        **extra,
    }


def show(r: dict[str, Any]) -> None:
    print(
        f"{r['tool']:14} workers {r['workers']}  concurrency {r['concurrency']:3}  "
        f"{r['samples_per_s']:7.1f} samples/s  efficiency {r['efficiency']:6.1%}  "
        f"overhead {r['overhead_ms_per_sample']:6.2f} ms/sample  scored {r['scored']}/"
        f"{r['samples']}  driver peak {r['driver_peak_rss_mb']} MB"
        + (f"  worker peaks {r['worker_peak_rss_mb']} MB" if "worker_peak_rss_mb" in r else ""),
        flush=True,
    )
    cpu = r["cpu_s"]
    print(
        "    CPU ms/sample: "
        + "  ".join(
            f"{group} {seconds / r['samples'] * 1e3:.2f}" for group, seconds in sorted(cpu.items())
        )
        + f"  total {sum(cpu.values()) / r['samples'] * 1e3:.2f}"
        f"  (cores busy {sum(cpu.values()) / r['seconds']:.2f})",
        flush=True,
    )
    if "steady_cpu_s" in r:
        cpu, n = r["steady_cpu_s"], r["steady_samples"]
        print(
            f"    after the first result ({r['start_s']:.1f} s): "
            f"{r['steady_samples_per_s']:.1f} samples/s, CPU ms/sample: "
            + "  ".join(
                f"{group} {seconds / n * 1e3:.2f}" for group, seconds in sorted(cpu.items())
            )
            + f"  total {sum(cpu.values()) / n * 1e3:.2f}",
            flush=True,
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=5000)
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[32, 64])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--cpus", type=float, default=float(os.cpu_count() or 2))
    parser.add_argument("--rpm", type=float, default=None)
    parser.add_argument("--tpm", type=float, default=None)
    parser.add_argument("--max-calls", type=int, default=None)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--input", choices=["list", "dataset"], default="list")
    parser.add_argument("--summary", type=Path, default=None)
    args = parser.parse_args()
    import ray

    src = str(ROOT / "src")
    ray.init(
        num_cpus=int(args.cpus),
        object_store_memory=300 * 2**20,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join([src, str(ROOT)])}},
    )
    ray.data.DataContext.get_current().enable_progress_bars = False
    out: list[dict[str, Any]] = []
    with delayed_server(args.delay) as base_url:
        for concurrency in args.concurrency:
            out.append(local_run(base_url, args.samples, concurrency, args.delay))
            show(out[-1])
        total = max(args.concurrency)
        for workers in args.workers:
            out.append(ray_run(base_url, args.samples, workers, total, args.cpus, args.delay, args))
            show(out[-1])
    one = next(r for r in out if r["tool"] == "evaluate()" and r["concurrency"] == total)
    for r in out:
        if r["tool"] == "ragrecall.ray":
            print(
                f"ray {r['workers']} workers / one process at {total}: "
                f"{r['samples_per_s'] / one['samples_per_s']:.2f}x"
            )
    if args.summary:
        write_json(
            args.summary,
            {"commit": commit(), "args": vars(args) | {"summary": None, "out": None}, "runs": out},
        )
    ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
