"""Balanced accuracy of a per-item JSONL (from agreement.py --out) at several thresholds on
P(supported), without calling the judge again.

    python benchmarks/calibrate.py benchmarks/out/items.jsonl [--thresholds 0.3 0.5 0.7]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import balanced_accuracy, fmt, mae, pearson


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("items", type=Path)
    parser.add_argument("--thresholds", type=float, nargs="+",
                        default=[0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9])
    args = parser.parse_args()
    items = [json.loads(line) for line in args.items.open()]
    for bench in sorted({i["bench"] for i in items}):
        rows = [i for i in items if i["bench"] == bench and i["result"]["status"] == "scored"]
        print(f"{bench}: {len(rows)} scored items")
        for t in args.thresholds:
            gold, pred, per_gold, per_pred = [], [], [], []
            for row in rows:
                verdicts = row["result"]["verdicts"]
                decided = [_decide(v, t) for v in verdicts]
                gold += row["gold"]
                pred += decided
                per_gold.append(sum(row["gold"]) / len(row["gold"]))
                per_pred.append(sum(decided) / len(decided))
            line = f"  threshold {t:.2f}: balanced accuracy {fmt(balanced_accuracy(gold, pred))}"
            if bench == "lfqa":
                line += (f"  Pearson {fmt(pearson(per_pred, per_gold))}  "
                         f"MAE {fmt(mae(per_pred, per_gold))}")
            print(line)
    return 0


def _decide(verdict: dict, threshold: float) -> bool:
    p = verdict.get("p_supported")
    if p is None:
        return bool(verdict["attributed"])
    if "quote is not in the passages" in verdict.get("reason", ""):  # failed the evidence check
        return False
    return bool(p >= threshold)


if __name__ == "__main__":
    sys.exit(main())
