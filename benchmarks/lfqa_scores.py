"""Score all 600 LFQA-Verification answers with a judge once, resumably, for the experiments
that need them (``ppi.py --real``, interval coverage, calibration figures).

    python benchmarks/lfqa_scores.py --out benchmarks/out/lfqa600 [--limit 600] [--judge local]

Writes ``DIR/data.jsonl`` (the answers in a random order fixed by ``--seed``: reference
sentences as locked claims, the question's documents as contexts), ``DIR/gold.jsonl`` (each
answer's majority labels and every annotator's) and runs ``ragrecall eval`` on it with
``--out DIR/results.jsonl``: every finished answer is saved at once, and running the same
command again goes on where it stopped. Any prefix of the results is a random sample.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from _common import data_dir, lfqa_answers


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", help="the shared datasets folder")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/out/lfqa600"))
    parser.add_argument("--limit", type=int, default=600)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--judge", default="local", help="passed to `ragrecall eval --judge`")
    args = parser.parse_args()
    root = data_dir(args.data)
    if root is None:
        print("skipped: the shared datasets are absent")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    answers = lfqa_answers(root, args.limit, args.seed)
    with (args.out / "data.jsonl").open("w") as data, (args.out / "gold.jsonl").open("w") as gold:
        for a in answers:
            sample = {
                "sample_id": a["id"],
                "user_input": a["user_input"],
                "reference": a["reference"],
                "reference_claims": a["reference_claims"],
                "retrieved_contexts": a["retrieved_contexts"],
            }
            data.write(json.dumps(sample) + "\n")
            gold.write(json.dumps({"sample_id": a["id"], "gold": a["gold"], "labels": a["labels"]}))
            gold.write("\n")
    command = [
        str(Path(sys.executable).with_name("ragrecall")), "eval", str(args.out / "data.jsonl"),
        "--judge", args.judge, "--out", str(args.out / "results.jsonl"), "--no-progress",
    ]  # fmt: skip
    print(" ".join(command), flush=True)
    return subprocess.call(command)


if __name__ == "__main__":
    raise SystemExit(main())
