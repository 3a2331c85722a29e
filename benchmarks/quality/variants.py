"""Verdict variants (issue 28): P(supported) of uncertain claims asked again in K variants.

    python -m benchmarks.quality.variants --data /work/lfqa600/data.jsonl \
        --gold /work/lfqa600/gold.jsonl
        --baseline /work/lfqa600/results.jsonl [--limit 30] [--variants 2] [--band 0.1]
        [--out benchmarks/out/variants.jsonl] [--rescore OUT]

Scores the first ``--limit`` answers of ``--data`` (LFQA sentences as locked claims) with
``ContextRecall(LocalJudge(), variants=K, variant_band=band)``, one answer at a time, and
compares each claim's P(supported) with the people's majority label (``--gold``) and with the
baseline run's verdicts on the same answers (``--baseline``: today's defaults, the results file
of ``lfqa_scores.py``). Every verdict within the band keeps each variant's P
(``ClaimVerdict.p_variants``), so smaller K and narrower bands are re-computed from the same
run without asking the judge again (``--variants`` and ``--band`` are the widest measured).

(A ``--from-baseline`` mode that asked only the variants, through the metric's private
refiner, gave the same figures for a third of the judge time; it reached into the metric's
internals, so it was removed with the move to public names: it runs at 5d24f8d.)

Printed per setting: claims, AUC of P(supported), Brier score, distinct P values (rounded to
0.01), balanced accuracy of the default decision, share of claims asked again, and judge calls
per answer relative to the base verdicts (a variant call reuses the base prompt's cached
passages; the content-free baselines are asked once per run). Seconds per answer of
this run and of the baseline's answers are printed as measured (the baseline ran concurrently
with other work; compare the calls).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks._common import commit


def auc(scores: Sequence[float], labels: Sequence[bool]) -> float | None:
    """Area under the ROC curve (ties count half)."""
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    if not pos or not neg:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def balanced_accuracy(pred: Sequence[bool], labels: Sequence[bool]) -> float | None:
    pos = [p for p, y in zip(pred, labels, strict=True) if y]
    neg = [not p for p, y in zip(pred, labels, strict=True) if not y]
    if not pos or not neg:
        return None
    return (sum(pos) / len(pos) + sum(neg) / len(neg)) / 2


def figures(ps: Sequence[float], pred: Sequence[bool], labels: Sequence[bool]) -> dict[str, Any]:
    return {
        "claims": len(ps),
        "auc": auc(ps, labels),
        "brier": sum((p - y) ** 2 for p, y in zip(ps, labels, strict=True)) / len(ps),
        "distinct_p": len({round(p, 2) for p in ps}),
        "balanced_accuracy": balanced_accuracy(pred, labels),
    }


def mean_probability(ps: Sequence[float]) -> float:
    """The probability of the mean log-odds of ``ps`` (how ContextRecall combines variants;
    each P kept within 1e-4 of 0 and 1)."""
    clipped = [min(max(p, 1e-4), 1 - 1e-4) for p in ps]
    z = sum(math.log(p / (1 - p)) for p in clipped) / len(ps)
    return 1 / (1 + math.exp(-z))


def setting(rows: Sequence[dict[str, Any]], k: int, band: float) -> dict[str, Any]:
    """Figures of variants=k, variant_band=band, re-computed from the verdicts' p_variants."""
    from ragrecall import ClaimCache, ContextRecall

    # the default decision (the judge is not loaded)
    D = ContextRecall(judge="local", cache=ClaimCache()).decision
    ps, pred, labels = [], [], []
    asked = calls = base_calls = 0
    for row in rows:
        for v, y in zip(row["verdicts"], row["gold"], strict=True):
            base_calls += 1
            pv = v.get("p_variants")
            p0 = pv[0] if pv else v["p_supported"]
            overlap = v["word_overlap"] or 0.0
            p = p0
            if k and pv and abs(D.margin(p0, overlap)) < band:
                p = mean_probability(pv[: 1 + k])
                asked += 1
                calls += k
            ps.append(p)
            pred.append(D.counts(p, overlap))
            labels.append(y)
    calls += (k + 1) if asked else 0  # the content-free baselines, once per run
    out = figures(ps, pred, labels)
    out.update(
        variants=k,
        band=band,
        asked_share=asked / len(ps),
        call_ratio=(base_calls + calls) / base_calls,
    )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--gold", type=Path, required=True)
    parser.add_argument("--baseline", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=30)
    parser.add_argument("--variants", type=int, default=2)
    parser.add_argument("--band", type=float, default=0.1)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--rescore", type=Path, help="re-read an --out file; no judge")
    args = parser.parse_args()
    print(f"command: {shlex.join(['python', *sys.argv])}")
    load = os.getloadavg()
    print(f"commit {commit()}  date {time.strftime('%Y-%m-%d %H:%M')}  load {load[0]:.2f}")

    gold = {}
    for line in args.gold.open():
        g = json.loads(line)
        gold.setdefault(g["sample_id"], g["gold"])
    baseline = {}
    for line in args.baseline.open():
        r = json.loads(line)
        baseline[r["sample"]["sample_id"]] = r["results"]["context_recall"]

    if args.rescore:
        rows = [json.loads(line) for line in args.rescore.open()]
    else:
        from ragrecall import ClaimCache, ContextRecall
        from ragrecall.judges import LocalJudge

        metric = ContextRecall(
            LocalJudge(), cache=ClaimCache(), variants=args.variants, variant_band=args.band
        )
        rows = []
        sink = args.out.open("w") if args.out else None  # each answer as it finishes
        samples = [
            json.loads(line) for line, _ in zip(args.data.open(), range(args.limit), strict=False)
        ]
        for n, sample in enumerate(samples, 1):
            sid = sample["sample_id"]
            if sid not in baseline or sid not in gold:
                print(f"  {n}: {sid} not in the baseline or gold yet; skipped")
                continue
            start = time.perf_counter()
            result = metric.score(sample)
            seconds = time.perf_counter() - start
            if result.status != "scored":
                print(f"  {n}: {sid} unscorable: {result.reason}")
                continue
            rows.append(
                {
                    "sample_id": sid,
                    "gold": gold[sid],
                    "seconds": seconds,
                    "usage": result.usage.model_dump() if result.usage else None,
                    "verdicts": [v.model_dump() for v in result.verdicts],
                }
            )
            if sink is not None:
                sink.write(json.dumps(rows[-1]) + "\n")
                sink.flush()
            asked = sum(bool(v.p_variants) for v in result.verdicts)
            print(f"  {n}/{len(samples)} {sid}: {seconds:.1f} s, {asked} asked again", flush=True)
        if sink is not None:
            sink.close()

    base_ps, base_pred, labels = [], [], []
    for row in rows:
        b = baseline[row["sample_id"]]
        for v, y in zip(b["verdicts"], row["gold"], strict=True):
            base_ps.append(v["p_supported"])
            base_pred.append(v["attributed"])
            labels.append(y)
    base = figures(base_ps, base_pred, labels)
    base_seconds = sum(baseline[r["sample_id"]]["elapsed_s"] for r in rows) / len(rows)
    base_calls = sum(baseline[r["sample_id"]]["usage"]["calls"] for r in rows) / len(rows)
    seconds = sum(r.get("seconds", 0.0) for r in rows) / len(rows)
    calls = sum((r.get("usage") or {}).get("calls", 0) for r in rows) / len(rows)
    print(f"\n{len(rows)} answers, {base['claims']} claims")

    def show(name: str, f: dict[str, Any]) -> None:
        extra = (
            f"  asked {f['asked_share']:.2f}  calls x{f['call_ratio']:.2f}" if "band" in f else ""
        )
        print(
            f"{name:22s} AUC {f['auc']:.3f}  Brier {f['brier']:.4f}  distinct {f['distinct_p']:3d}"
            f"  BA {f['balanced_accuracy']:.3f}{extra}"
        )

    show("baseline (results)", base)
    for k in range(args.variants + 1):
        for band in (0.03, 0.05, 0.08, 0.1, 0.15, 0.2, 1.0):
            if band <= args.band or (band == 1.0 and args.band >= 1.0):
                show(f"K={k} band={band}", setting(rows, k, band))
    print(
        f"\nseconds per answer: this run {seconds:.1f} ({calls:.1f} calls), baseline "
        f"{base_seconds:.1f} ({base_calls:.1f} calls; run concurrently with other work)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
