"""``ragrecall watch`` (``ragrecall.sinks.watch``) on simulated logs: does it catch a drop, and
how often does it cry wolf?

    python -m benchmarks.quality.watch [--sims 1000] [--seed 0] [--summary out/watch.json]

No judge and no data. Each simulated log has ``--windows`` (20) hourly windows of 50 to 200
scored records each; a record's recall is the share of its 1 to 6 claims supported, each
claim supported with a probability drawn per record from a Beta distribution of mean 0.7 (so
scores are a mix of 0, 1 and fractions, overdispersed as real answers are). The baseline is
the first 5 windows. Half the logs (``--sims`` of them) have no drop: the share with any alarm
is the false-alarm rate per log (target <= 5 %). The other half drop the mean by 10 points
(0.7 -> 0.6) from a window drawn at random after the baseline, leaving at least three dropped
windows: the share flagged within the first three dropped windows is the detection rate
(target >= 90 %); an alarm before the drop counts as a false one there too.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from benchmarks._common import commit, write_json
from ragrecall import RecallResult, Sample
from ragrecall.engines import Record
from ragrecall.sinks import watch

START = datetime(2026, 1, 1, tzinfo=timezone.utc)
SAMPLE = Sample(user_input="q", reference="r.", retrieved_contexts=["c"])
DISPERSION = 2.0  # the Beta's second parameter: smaller, more spread between answers


def score(rng: random.Random, mean: float) -> float:
    """One answer's recall: 1 to 6 claims, each supported with a probability ~ Beta(mean)."""
    claims = rng.randint(1, 6)
    p = rng.betavariate(DISPERSION * mean / (1 - mean), DISPERSION)
    return sum(rng.random() < p for _ in range(claims)) / claims


def simulate(
    rng: random.Random, windows: int, drop_at: int | None, drop: float = 0.1
) -> list[Record]:
    """A log of ``windows`` hourly windows, the mean 0.7 until ``drop_at``, 0.7 - drop after."""
    records = []
    for w in range(windows):
        mean = 0.7 - drop if drop_at is not None and w >= drop_at else 0.7
        size = rng.randint(50, 200)
        for i in range(size):
            result = RecallResult(metric="context_recall", score=score(rng, mean), status="scored")
            when = START + timedelta(hours=w, seconds=i * 3600 / size)
            records.append(Record("k", i, SAMPLE, {"context_recall": result}, timestamp=when))
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sims", type=int, default=1000, help="logs of each kind (1000)")
    parser.add_argument("--windows", type=int, default=20, help="windows per log (20)")
    parser.add_argument("--baseline", type=int, default=5, help="baseline windows (5)")
    parser.add_argument("--false-alarm", type=float, default=0.05, help="stated rate (0.05)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--summary", type=Path, help="write the figures as JSON here")
    args = parser.parse_args()
    load_start = os.getloadavg()
    print(f"commit {commit()}, {args.sims} logs of each kind, seed {args.seed}, load {load_start}")
    rng = random.Random(args.seed)
    began = time.perf_counter()
    false_alarms = detected = early = 0
    delays: list[int] = []
    statement = ""
    for _ in range(args.sims):
        flat = watch(
            simulate(rng, args.windows, None),
            window="1h",
            baseline=args.baseline,
            false_alarm=args.false_alarm,
        )
        false_alarms += flat.flagged
        statement = flat.statement()
        drop_at = rng.randint(args.baseline, args.windows - 3)
        seen = watch(
            simulate(rng, args.windows, drop_at),
            window="1h",
            baseline=args.baseline,
            false_alarm=args.false_alarm,
        )
        early += any(a.window < drop_at for a in seen.alarms)
        hits = [a.window - drop_at for a in seen.alarms if drop_at <= a.window <= drop_at + 2]
        if hits:
            detected += 1
            delays.append(min(hits))
    elapsed = time.perf_counter() - began
    figures = {
        "sims": args.sims,
        "seed": args.seed,
        "windows": args.windows,
        "baseline": args.baseline,
        "statement": statement,
        "false_alarm_rate": false_alarms / args.sims,
        "detection_within_3": detected / args.sims,
        "alarm_before_drop": early / args.sims,
        "mean_delay_windows": sum(delays) / len(delays) if delays else None,
        "seconds": elapsed,
        "commit": commit(),
        "load_avg_start": load_start,
        "load_avg_end": os.getloadavg(),
    }
    print(statement)
    print(
        f"false alarms per log (no drop): {false_alarms}/{args.sims} = "
        f"{false_alarms / args.sims:.1%} (target <= 5 %)"
    )
    print(
        f"10-point drop detected within three windows: {detected}/{args.sims} = "
        f"{detected / args.sims:.1%} (target >= 90 %); mean delay "
        f"{figures['mean_delay_windows']} windows; an alarm before the drop: {early}"
    )
    print(f"{elapsed:.1f} s, load average at end {figures['load_avg_end']}")
    write_json(args.summary, figures)


if __name__ == "__main__":
    main()
