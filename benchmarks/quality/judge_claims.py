"""The judge's verdicts on chosen claims of the shared datasets: those that ``injection.py
--reach`` lists as stated word for word, to see what a judge said of them before the library
supported them without one.

    python -m benchmarks.security.injection --reach --datasets ../shared/datasets
    git worktree add /tmp/before 0cb4d36   # the library before the verbatim rule
    PYTHONPATH=/tmp/before/src python -m benchmarks.quality.judge_claims \\
        --reach benchmarks/out/injection_reach.json --datasets ../shared/datasets \\
        [--set lfqa] [--set "attributionbench dev"] [--out benchmarks/out/judge_claims.jsonl]

Each answer's listed claims are scored with ``ContextRecall`` (the judge's defaults) against the
answer's documents; one line per answer: the claims, people's labels, the verdicts and their
reasons (a rerun goes on where it stopped). Prints the claims people label supported that the
judge did not support. Skips cleanly without the datasets.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from benchmarks._common import OUT, add_judge_args, data_dir, make_judge, shared_sets
from ragrecall import ClaimCache, ContextRecall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reach", type=Path, default=OUT / "injection_reach.json")
    parser.add_argument("--datasets", default=None)
    parser.add_argument("--set", action="append", choices=["lfqa", "attributionbench dev"])
    parser.add_argument("--out", type=Path, default=OUT / "judge_claims.jsonl")
    add_judge_args(parser)
    args = parser.parse_args()
    root = data_dir(args.datasets)
    if root is None:
        print("skipped: the shared datasets are absent")
        return 0
    listed = json.loads(args.reach.read_text())
    answers = shared_sets(root)
    done = set()
    if args.out.exists():
        done = {json.loads(line)["id"] for line in args.out.read_text().splitlines()}
    metric = ContextRecall(make_judge(args), cache=ClaimCache())
    missed = []
    for name in args.set or list(answers):
        by_id = {a["id"]: a for a in answers[name]}
        for entry in listed[name]["stated_word_for_word"]:
            answer = by_id[entry["id"]]
            if answer["id"] in done:
                continue
            claims = [answer["reference_claims"][k] for k in entry["claims"]]
            start = time.perf_counter()
            result = metric.score(
                {
                    "user_input": answer["user_input"],
                    "reference_claims": claims,
                    "retrieved_contexts": answer["retrieved_contexts"],
                }
            )
            row = {
                "set": name,
                "id": answer["id"],
                "claims": claims,
                "gold": [answer["gold"][k] for k in entry["claims"]],
                "supported": [v.attributed for v in result.verdicts],
                "reasons": [v.reason for v in result.verdicts],
                "seconds": round(time.perf_counter() - start, 1),
            }
            with args.out.open("a") as f:
                f.write(json.dumps(row) + "\n")
            print(f"{name} {row['id']} {row['supported']} {row['seconds']} s", flush=True)
    for line in args.out.read_text().splitlines():
        row = json.loads(line)
        missed += [
            (row["id"], c)
            for c, g, s in zip(row["claims"], row["gold"], row["supported"], strict=True)
            if g is True and not s
        ]
    print(f"labelled supported, not supported by the judge: {len(missed)}")
    for answer_id, claim in missed:
        print(f"  {answer_id}: {claim[:100]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
