"""Batch mode's own cost: client CPU per sample of ``evaluate`` on the ``BatchEngine`` (every
round replayed) against ``evaluate()`` online, on the same samples and the same keyword judge.

    PYTHONPATH=testkit python -m benchmarks.speed.batch_replay [--samples 2000]
        [--references 500] [--summary out.json]

The servers run in child processes (``testkit/batchserver.py`` for the Batch API, answering on
its first poll; ``testkit/faultserver.py`` online; they import each other by their plain names,
so ``testkit/`` goes on the path as the tests have it), so this process's CPU time is the client's
alone. Samples have 3 claims and 2 chunks; ``--references`` distinct references (several
samples share one, as logged queries do). Reported: wall time, client CPU ms per sample,
requests sent, batches and rounds. Batch mode replays a sample once per round it takes part
in, so its CPU per sample is expected to be a few times the online one; this measures how
many.
"""

from __future__ import annotations

import argparse
import importlib.util
import multiprocessing as mp
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from benchmarks._common import commit, write_json


def rows(n: int, references: int) -> list[dict[str, Any]]:
    tag = uuid.uuid4().hex[:8]
    out = []
    for i in range(n):
        r = i % references
        out.append(
            {
                "question": f"What do animals do {tag} {r}?",
                "reference": f"Cats purr {tag} {r}. Birds sing {tag} {r}. Dogs bark {tag} {r}.",
                "contexts": [f"Cats purr {tag} {r} loudly ({i}).", f"Birds sing {tag} {r} ({i})."],
            }
        )
    return out


def _serve(kind: str, ready: Any, stop: Any) -> None:
    if kind == "batch":
        from batchserver import BatchServer

        server: Any = BatchServer(polls_to_finish=1, lifetime=3600)
    else:
        from faultserver import FaultServer

        server = FaultServer(lifetime=3600)
    with server:
        ready.put(server.url)
        stop.wait()


class Served:
    """A test server in a child process."""

    def __init__(self, kind: str):
        self.ready: Any = mp.Queue()
        self.stop = mp.Event()
        self.proc = mp.Process(target=_serve, args=(kind, self.ready, self.stop), daemon=True)

    def __enter__(self) -> str:
        self.proc.start()
        return str(self.ready.get(timeout=60))

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.proc.join(10)


def judge(url: str) -> Any:
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(base_url=url, api_key="x", model="keyword-judge", max_retries=0)


def measure(label: str, run: Any, n: int) -> dict[str, Any]:
    wall, cpu = time.perf_counter(), time.process_time()
    report = run()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    scored = sum(r.status == "scored" for r in report.results["context_recall"])
    row = {
        "engine": label,
        "samples": n,
        "scored": scored,
        "requests": report.usage.calls,
        "wall_s": round(wall, 2),
        "client_cpu_ms_per_sample": round(1000 * cpu / n, 2),
    }
    print(
        f"{label:16} {n} samples ({scored} scored), {row['requests']} requests, "
        f"wall {wall:.1f} s, client CPU {row['client_cpu_ms_per_sample']} ms/sample"
    )
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--references", type=int, default=500)
    parser.add_argument("--summary", type=Path, default=None)
    args = parser.parse_args()
    if importlib.util.find_spec("batchserver") is None:
        print(
            "needs testkit/ on the path: PYTHONPATH=testkit python -m benchmarks.speed.batch_replay"
        )
        return 2
    from ragrecall import ClaimCache, ContextRecall, evaluate
    from ragrecall.engines import BatchEngine

    data = rows(args.samples, args.references)

    def metric(chat: Any) -> ContextRecall:
        return ContextRecall(chat, strategy="batched", cache=ClaimCache())

    results = []
    with Served("online") as url:
        results.append(
            measure(
                "evaluate() c=32",
                lambda: evaluate(data, [metric(judge(url))], concurrency=32, show_progress=False),
                args.samples,
            )
        )
    with Served("batch") as url, tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "out.jsonl"
        batches: list[str] = []
        results.append(
            measure(
                "BatchEngine",
                lambda: evaluate(
                    data,
                    [metric],
                    out=out,
                    engine=BatchEngine(judge(url), poll_interval=0.05),
                    show_progress=False,
                    notify=lambda m: batches.append(m) if "sent" in m else None,
                ),
                args.samples,
            )
        )
        print(f"BatchEngine      {len(batches)} batches: " + "; ".join(batches))
    online, batch = results
    ratio = batch["client_cpu_ms_per_sample"] / online["client_cpu_ms_per_sample"]
    print(f"client CPU per sample, batch / online: {ratio:.2f}x")
    if args.summary:
        write_json(args.summary, {"commit": commit(), "runs": results, "cpu_ratio": ratio})
    return 0


if __name__ == "__main__":
    sys.exit(main())
