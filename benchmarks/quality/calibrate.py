"""Balanced accuracy of a per-item JSONL (from agreement.py --out) at several thresholds on
P(supported), without calling the judge again.

    python -m benchmarks.quality.calibrate benchmarks/out/items.jsonl [more.jsonl ...]
        [--thresholds 0.3 0.5 0.7] [--overlap-weights 0.3 0.5 [--data ../shared/datasets]]

Several files are pooled (an item in more than one counts once, from the first file).

``--overlap-weights A``: decide on (1 - A) x P(supported) + A x overlap instead, where overlap
is the share of the claim's content words found in its best-matching context sentence (the
library's word check, ``ContextRecall(lexical_weight=A)``; needs the data). The items keep the
judge's own P(supported), so files scored at any ``lexical_weight`` can be re-decided.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from benchmarks._common import (
    attributionbench_rows,
    data_dir,
    fmt,
    lfqa_answers,
    mae,
    pearson,
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("items", type=Path, nargs="+")
    parser.add_argument(
        "--thresholds", type=float, nargs="+", default=[0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
    )
    parser.add_argument("--overlap-weights", type=float, nargs="+", default=[0.0])
    parser.add_argument("--data", help="the shared datasets folder (for --overlap-weights)")
    args = parser.parse_args()
    from ragrecall.stats import balanced_accuracy

    pooled: dict[tuple[str, str], dict[str, Any]] = {}
    for path in args.items:
        for line in path.open():
            item = json.loads(line)
            pooled.setdefault((item["bench"], item["id"]), item)
    items = list(pooled.values())
    overlaps = _overlaps(items, args.data) if any(args.overlap_weights) else {}
    for bench in sorted({i["bench"] for i in items}):
        rows = [i for i in items if i["bench"] == bench and i["result"]["status"] == "scored"]
        print(f"{bench}: {len(rows)} scored items")
        for weight in args.overlap_weights:
            for t in args.thresholds:
                gold, pred, per_gold, per_pred = [], [], [], []
                for row in rows:
                    verdicts = row["result"]["verdicts"]
                    lexical = overlaps.get((bench, row["id"]), [0.0] * len(verdicts))
                    decided = [
                        _decide(v, t, weight, o) for v, o in zip(verdicts, lexical, strict=True)
                    ]
                    gold += row["gold"]
                    pred += decided
                    per_gold.append(sum(row["gold"]) / len(row["gold"]))
                    per_pred.append(sum(decided) / len(decided))
                line = f"  threshold {t:.2f}"
                if weight:
                    line += f", overlap weight {weight:.2f}"
                line += f": balanced accuracy {fmt(balanced_accuracy(gold, pred))}"
                if bench == "lfqa":
                    line += (
                        f"  Pearson {fmt(pearson(per_pred, per_gold))}  "
                        f"MAE {fmt(mae(per_pred, per_gold))}"
                    )
                print(line)
    return 0


def _decide(verdict: dict[str, Any], threshold: float, weight: float, overlap: float) -> bool:
    from ragrecall.calibration import Decision

    p = verdict.get("p_supported")
    if p is None:
        p = float(verdict["attributed"])
    if "quote is not in the passages" in verdict.get("reason", ""):  # failed the evidence check
        return False
    return Decision(threshold, weight).counts(p, overlap)


def _overlaps(items: list[dict[str, Any]], data: str | None) -> dict[tuple[str, str], list[float]]:
    """Per item, per claim: the best share of the claim's content words in one sentence."""
    from ragrecall.text import word_overlap

    root = data_dir(data)
    if root is None:
        sys.exit("--overlap-weights needs the shared datasets (pass --data)")
    contexts: dict[tuple[str, str], list[Any]] = {}
    for row in lfqa_answers(root, 10**9, 0):
        contexts["lfqa", row["id"]] = row["retrieved_contexts"]
    for split in ("dev", "test"):
        for row in attributionbench_rows(root, split, 10**9, 0):
            contexts["attributionbench", row["id"]] = row["retrieved_contexts"]
    out = {}
    for item in items:
        texts = [
            c["text"] if isinstance(c, dict) else c for c in contexts[item["bench"], item["id"]]
        ]
        out[item["bench"], item["id"]] = [
            max((word_overlap(v["claim"], t) for t in texts), default=0.0)
            for v in item["result"]["verdicts"]
        ]
    return out


if __name__ == "__main__":
    sys.exit(main())
