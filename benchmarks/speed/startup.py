"""How long ragrecall takes to answer: the import and the command line's start.

    python -m benchmarks.speed.startup [--runs 10] [--summary FILE]

Each case runs in a fresh process, ``--runs`` times (bytecode cached: one untimed run first),
and prints the median and the range of the wall time: ``python -c pass`` (the interpreter
alone), ``import ragrecall``, ``from ragrecall import ContextRecall``, ``ragrecall --version``,
``ragrecall --help``, ``ragrecall eval --help`` and two usage errors (``ragrecall eval`` with
no data; ``ragrecall eval DATA --max-calls -5``, DATA a file that is not there). The command
is the ``ragrecall`` script installed beside this Python (else ``python -m ragrecall.cli``).
To time another checkout, put its ``src`` first:
``PYTHONPATH=/tmp/before/src python -m benchmarks.speed.startup``. Prints figures with the
load average; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def command() -> list[str]:
    """The installed ``ragrecall`` script, run by this Python, or ``python -m ragrecall.cli``."""
    script = Path(sys.executable).parent / "ragrecall"
    return (
        [sys.executable, str(script)]
        if script.is_file()
        else [sys.executable, "-m", "ragrecall.cli"]
    )


def cases() -> dict[str, tuple[list[str], int]]:
    """Each case's argv and the exit code it must end with."""
    python, cli = [sys.executable], command()
    return {
        "python -c pass": ([*python, "-c", "pass"], 0),
        "import ragrecall": ([*python, "-c", "import ragrecall"], 0),
        "from ragrecall import ContextRecall": (
            [*python, "-c", "from ragrecall import ContextRecall"],
            0,
        ),
        "ragrecall --version": ([*cli, "--version"], 0),
        "ragrecall --help": ([*cli, "--help"], 0),
        "ragrecall eval --help": ([*cli, "eval", "--help"], 0),
        "ragrecall eval (usage error)": ([*cli, "eval"], 2),
        "ragrecall eval --max-calls -5": (
            [*cli, "eval", "no-such-data.jsonl", "--max-calls", "-5"],
            2,
        ),
    }


def wall(argv: list[str], expected: int) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != expected:
        sys.exit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.decode()[-500:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="timed runs per case (default 10)")
    parser.add_argument("--summary", type=Path, help="write the medians as JSON here")
    args = parser.parse_args()
    print(
        f"load average at start: {os.getloadavg()[0]:.2f}; CPUs usable: "
        f"{len(os.sched_getaffinity(0))}; PYTHONPATH={os.environ.get('PYTHONPATH', '')!r}"
    )
    medians: dict[str, float] = {}
    for name, (argv, expected) in cases().items():
        wall(argv, expected)  # bytecode written, files in the page cache
        times = sorted(wall(argv, expected) for _ in range(args.runs))
        medians[name] = statistics.median(times)
        print(
            f"{name:36} median {medians[name]:6.3f} s  (min {times[0]:.3f}, max {times[-1]:.3f}; "
            f"load {os.getloadavg()[0]:.2f})"
        )
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    if args.summary:
        args.summary.parent.mkdir(parents=True, exist_ok=True)
        args.summary.write_text(json.dumps({"median_s": medians, "runs": args.runs}, indent=2))


if __name__ == "__main__":
    main()
