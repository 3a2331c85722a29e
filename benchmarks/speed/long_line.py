"""A one-line reference of megabytes, end to end (issue 43, item 13).

    python -m benchmarks.speed.long_line [--sizes 5 30] [--profile] [--summary FILE]

For each size in ``--sizes`` (MB): one sample whose reference is a single line of that many
megabytes of prose (sentences of about 80 characters, no line break), scored by
``evaluate`` with ``ContextRecall(claims="sentences")`` and ``ragrecall.testing``'s
``ScriptedJudge`` (no model: the time is ragrecall's own). Prints the wall time of each size,
its seconds per MB, and the ratio of each size's time to the smallest one's beside the ratio of
their sizes: linear work keeps the two near each other (pysbd's sentence splitting made a
0.2 MB line take 38 s and a 30 MB one never end, until lines were split in windows).
``--profile`` prints the top functions by cumulative time for the largest size. The load
average is printed at the start and the end.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

NAMES = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]


def reference(mb: float) -> str:
    """One line of ``mb`` megabytes of distinct sentences."""
    parts, size, i = [], 0, 0
    while size < mb * 1_000_000:
        part = (
            f"The {NAMES[i % 8]} tower {i} stands near the {NAMES[(i * 3) % 8]} river in the "
            f"{NAMES[(i * 5) % 8]} valley. "
        )
        parts.append(part)
        size += len(part)
        i += 1
    return "".join(parts).strip()


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def run(mb: float, profile: bool) -> dict[str, Any]:
    from ragrecall import ContextRecall, evaluate
    from ragrecall.testing import ScriptedJudge

    rows = [
        {
            "question": "Where does the alpha tower stand?",
            "reference": reference(mb),
            "contexts": ["The alpha tower 0 stands near the alpha river in the alpha valley."],
        }
    ]
    metric = ContextRecall(ScriptedJudge(), claims="sentences")
    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    started = time.perf_counter()
    report = evaluate(rows, [metric], show_progress=False)
    seconds = time.perf_counter() - started
    if profiler is not None:
        import pstats

        profiler.disable()
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
    score = report.results["context_recall"][0].score
    return {"mb": mb, "seconds": round(seconds, 3), "score": score}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[5.0, 30.0], help="MB each")
    parser.add_argument("--profile", action="store_true", help="cProfile the largest size")
    parser.add_argument("--summary", type=Path, help="write the figures here as JSON")
    args = parser.parse_args()
    sizes = sorted(args.sizes)
    print(f"load average at start: {load()}", flush=True)
    rows = []
    for mb in sizes:
        row = run(mb, args.profile and mb == sizes[-1])
        rows.append(row)
        print(f"{mb:g} MB: {row['seconds']:.2f} s ({row['seconds'] / mb:.2f} s per MB)", flush=True)
    first = rows[0]
    for row in rows[1:]:
        print(
            f"{row['mb']:g} MB / {first['mb']:g} MB: time x{row['seconds'] / first['seconds']:.2f} "
            f"for size x{row['mb'] / first['mb']:.2f}"
        )
    print(f"load average at end: {load()}")
    if args.summary:
        args.summary.write_text(json.dumps({"runs": rows, "load_end": load()}, indent=2) + "\n")


if __name__ == "__main__":
    main()
