"""Score a labelled benchmark with a judge once, resumably, for the experiments that need the
judge's scores (``ppi.py --real``, ``intervals.py``, calibration figures).

    python -m benchmarks.quality.judge_scores --out benchmarks/out/lfqa600 [--bench lfqa] \
        [--limit 600]
    python -m benchmarks.quality.judge_scores --out benchmarks/out/ab-dev --bench attributionbench
    python -m benchmarks.quality.judge_scores --out benchmarks/out/ab-small \
        --bench attributionbench \
        --split both --source LFQA --source AttributedQA

Writes ``DIR/data.jsonl`` (the answers in a random order fixed by ``--seed``: lfqa, each
answer's labelled sentences as locked claims and the question's documents as contexts;
attributionbench, each row of ``--split`` (dev, test or both) as a one-claim answer, only
those of the ``--source`` given, if any), ``DIR/gold.jsonl`` (per answer: the
majority label of each claim, every annotator's labels for lfqa, the source for
attributionbench) and runs ``ragrecall eval`` on it with ``--out DIR/results.jsonl``: every
finished answer is saved at once, and running the same command again goes on where it
stopped. Any prefix of the results is a random sample.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from pathlib import Path

from benchmarks._common import attributionbench_rows, data_dir, lfqa_answers

EXTRA = {"lfqa": "labels", "attributionbench": "source"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", help="the shared datasets folder")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/out/lfqa600"))
    parser.add_argument("--bench", default="lfqa", choices=sorted(EXTRA))
    parser.add_argument("--split", default="dev", choices=["dev", "test", "both"])
    parser.add_argument("--source", action="append", help="attributionbench: keep this source")
    parser.add_argument("--limit", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--judge", default="local", help="passed to `ragrecall eval --judge`")
    args = parser.parse_args()
    root = data_dir(args.data)
    if root is None:
        print("skipped: the shared datasets are absent")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    if args.bench == "lfqa":
        answers = lfqa_answers(root, args.limit, args.seed)
    else:
        splits = ["dev", "test"] if args.split == "both" else [args.split]
        answers = [
            a
            for split in splits
            for a in attributionbench_rows(root, split, 10**9, args.seed)
            if args.source is None or a["source"] in args.source
        ]
        if len(splits) > 1:
            random.Random(args.seed).shuffle(answers)
        answers = answers[: args.limit]
    extra = EXTRA[args.bench]
    with (args.out / "data.jsonl").open("w") as data, (args.out / "gold.jsonl").open("w") as gold:
        for a in answers:
            sample = {
                "sample_id": a["id"],
                "user_input": a["user_input"],
                "reference": " ".join(a["reference_claims"]),
                "reference_claims": a["reference_claims"],
                "retrieved_contexts": a["retrieved_contexts"],
            }
            data.write(json.dumps(sample) + "\n")
            gold.write(json.dumps({"sample_id": a["id"], "gold": a["gold"], extra: a[extra]}))
            gold.write("\n")
    command = [
        str(Path(sys.executable).with_name("ragrecall")), "eval", str(args.out / "data.jsonl"),
        "--judge", args.judge, "--out", str(args.out / "results.jsonl"), "--no-progress",
    ]  # fmt: skip
    print(" ".join(command), flush=True)
    return subprocess.call(command)


if __name__ == "__main__":
    raise SystemExit(main())
