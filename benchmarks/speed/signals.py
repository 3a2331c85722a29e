"""Ctrl-C and SIGTERM early in a ``ragrecall eval`` run, under load: how many runs end other
than with 130 / 143 and one line on stderr.

    python -m benchmarks.speed.signals [--runs 50] [--delays 0.1 0.2 0.35] [--busy 2]

Each run is ``python -X importtime -m ragrecall.cli eval`` on 40 rows with a keyword judge
that takes 0.15 s a call; the signal is sent ``delay`` seconds after ``ragrecall.cli``'s
first import (``_early``) is reported, so it lands while the modules load or the first
samples run. ``--busy`` busy loops run beside it (the load the time-based tests of
``tests/system/test_cli_start.py`` once failed under). Prints each failure (exit code and
the stderr's last lines) and the count per signal and delay; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from testkit.cli_signals import signal_after_start

ROOT = Path(__file__).resolve().parents[2]
WANT = {signal.SIGINT: (130, "interrupted"), signal.SIGTERM: (143, "terminated")}


def one(data: Path, sig: signal.Signals, delay: float) -> tuple[bool, int, list[str]]:
    """Whether one run ended as it should, its exit code and its stderr lines."""
    argv = [sys.executable, "-X", "importtime", "-m", "ragrecall.cli", "eval", str(data)]
    argv += ["--judge-factory", "testkit.cli_signals:slow_judge"]
    argv += ["--claim-mode", "sentences", "--no-progress"]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    process = subprocess.Popen(
        argv, cwd=data.parent, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    returncode, lines = signal_after_start(process, sig, delay)
    code, word = WANT[sig]
    ok = returncode == code and len(lines) == 1 and word in lines[0]
    return ok, returncode, lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--delays", type=float, nargs="+", default=[0.1, 0.2, 0.35])
    parser.add_argument("--busy", type=int, default=2)
    args = parser.parse_args()
    # Run from a script in the background, this process ignores SIGINT, and so would each run
    # (ragrecall leaves an ignored signal ignored): they take Ctrl-C as a user's command does.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            data = Path(tmp) / "data.jsonl"
            rows = [
                {"question": f"q{i}", "reference": f"Cats purr {i}.", "contexts": [f"Cats {i}."]}
                for i in range(40)
            ]
            data.write_text("".join(json.dumps(r) + "\n" for r in rows))
            print(f"load average at start: {os.getloadavg()[0]:.2f}; busy loops: {args.busy}")
            for delay in args.delays:
                for sig in WANT:
                    failed = 0
                    for _ in range(args.runs):
                        ok, code, lines = one(data, sig, delay)
                        if not ok:
                            failed += 1
                            print(f"  {sig.name} at {delay} s: exit {code}: {lines[-3:]}")
                    print(
                        f"{sig.name:8} at {delay:.2f} s: {failed}/{args.runs} runs ended "
                        f"otherwise (load {os.getloadavg()[0]:.2f})",
                        flush=True,
                    )
    finally:
        for loop in busy:
            loop.kill()


if __name__ == "__main__":
    main()
