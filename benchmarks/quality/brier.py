"""Does ``calibrate`` on a few labels make P(supported) better on the rest? (issue 27 item 5)

    python -m benchmarks.quality.brier --results /work/lfqa600/results.jsonl \
        --gold /work/lfqa600/gold.jsonl [--draws 20] [--labels 40] [--summary out.json]
    python -m benchmarks.quality.brier --results DIR/results.jsonl --gold DIR/gold.jsonl --source S
        (DIR: ``judge_scores.py --bench attributionbench``; S: one of its sources)

The results file is ``lfqa_scores.py``'s (the embedded judge's verdicts with P(supported)); the
gold file holds each answer's majority label per claim. No judge is called; without either
file it says so and exits 0. ``--draws`` times: draw ``--labels`` labelled claims at random,
``calibrate()`` on them as a person's labels would be, and on every other claim compare the
raw P(supported) with the profile's scaled one: Brier score, log loss, and the debiased ECE
beside the mean and 90th percentile a perfectly calibrated judge shows at that n. Target: the
Brier score after is no worse than the raw P's in at least 18 of 20 draws. Beside it, the
Platt fit applied unconditionally (what ``calibrate`` did before it checked the held-out Brier
gain). Then EM's prior
shift: 100 (or ``--labels``) labels at the data's share of supported claims, the other claims
thinned by class to ``--shift-to`` supported, and the Brier score there of the raw P, the
profile's, and the profile's moved by EM to that data.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
from pathlib import Path
from typing import Any

from benchmarks._common import scored_answers


def claims(results: Path, gold: Path, source: str | None = None) -> list[dict[str, Any]]:
    from ragrecall.calibration import Label

    out = []
    for sid, result, labels in scored_answers(results, gold, source):
        verdicts = result["verdicts"]
        for n, (v, y) in enumerate(zip(verdicts, labels, strict=True)):
            if v["p_supported"] is not None:
                out.append(
                    {
                        "answer": sid,
                        "score": result["score"],
                        "label": Label(
                            key=f"{sid}#{n}",
                            claim=v["claim"],
                            label="supported" if y else "not_supported",
                            attributed=v["attributed"],
                            p_supported=v["p_supported"],
                            word_overlap=v["word_overlap"] or 0.0,
                            judge="local",
                        ),
                        "p": v["p_supported"],
                        "y": bool(y),
                    }
                )
    return out


def platt_scaled(p: float, a: float, b: float) -> float:
    """``sigmoid(a * logit(p) + b)``, with ``p`` kept within 1e-6 of 0 and 1 (as the library's
    calibration profile scales)."""
    p = min(max(p, 1e-6), 1 - 1e-6)
    return 1 / (1 + math.exp(-(a * math.log(p / (1 - p)) + b)))


def draws(cs: list[dict[str, Any]], n: int, count: int, seed: int) -> list[dict[str, float]]:
    from ragrecall import calibrate
    from ragrecall.stats import brier_score, calibrated_ece, debiased_ece, log_loss, platt

    rng = random.Random(seed)
    rows = []
    for _ in range(count):
        chosen = set(rng.sample(range(len(cs)), n))
        profile = calibrate([cs[i]["label"] for i in chosen], resamples=200)
        rest = [c for i, c in enumerate(cs) if i not in chosen]
        y = [c["y"] for c in rest]
        raw = [c["p"] for c in rest]
        scaled = [profile.scale(p) for p in raw]
        a, b = platt([cs[i]["p"] for i in chosen], [cs[i]["y"] for i in chosen])
        rows.append(
            {
                "scaled": float(profile.scale_a != 1.0 or profile.scale_b != 0.0),
                "brier_platt": brier_score([platt_scaled(p, a, b) for p in raw], y),
                "brier_raw": brier_score(raw, y),
                "brier_cal": brier_score(scaled, y),
                "log_loss_raw": log_loss(raw, y),
                "log_loss_cal": log_loss(scaled, y),
                "ece_raw": debiased_ece(raw, y),
                "ece_cal": debiased_ece(scaled, y),
                "ece_calibrated_mean": calibrated_ece(scaled, draws=50)[0],
                "ece_calibrated_q90": calibrated_ece(scaled, draws=50)[1],
            }
        )
    return rows


def shifted(cs: list[dict[str, Any]], n: int, seed: int, share: float) -> dict[str, Any]:
    """A label shift: ``n`` labels drawn at the data's own share of supported claims; the other
        claims thinned at random, by class, to ``share`` supported (what a retriever that finds
        less would give, if a supported claim looks the same to the judge). The profile applied to
        them with and without EM's prior shift (``data_prior_em`` None: calibrate kept the raw P,
    so it did not shift)."""
    from ragrecall import calibrate
    from ragrecall.stats import brier_score

    rng = random.Random(seed)
    order = list(range(len(cs)))
    rng.shuffle(order)
    drawn = [cs[i] for i in order[:n]]
    rest = [cs[i] for i in order[n:]]
    positives = [c for c in rest if c["y"]]
    negatives = [c for c in rest if not c["y"]]
    keep = min(len(positives), round(share / (1 - share) * len(negatives)))
    target = rng.sample(positives, keep) + negatives
    plain = calibrate([c["label"] for c in drawn], resamples=200)
    moved = calibrate(
        [c["label"] for c in drawn], resamples=200, prior_shift_to=[c["p"] for c in target]
    )
    y = [c["y"] for c in target]
    return {
        "labels_prior": plain.labels_prior or 0.0,
        "data_prior_em": moved.data_prior,
        "data_prior_true": sum(y) / len(y),
        "brier_raw": brier_score([c["p"] for c in target], y),
        "brier_cal": brier_score([plain.scale(c["p"]) for c in target], y),
        "brier_shifted": brier_score([moved.scale(c["p"]) for c in target], y),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=Path("/work/lfqa600/results.jsonl"))
    parser.add_argument("--gold", type=Path, default=Path("/work/lfqa600/gold.jsonl"))
    parser.add_argument("--draws", type=int, default=20)
    parser.add_argument("--labels", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--shift-to", type=float, default=0.3, help="share for the shift test")
    parser.add_argument("--summary", type=Path)
    parser.add_argument("--source", help="an AttributionBench source (judge_scores.py's gold)")
    args = parser.parse_args()
    if not args.results.is_file() or not args.gold.is_file():
        print(f"skipped: {args.results} or {args.gold} is absent")
        return 0
    cs = claims(args.results, args.gold, args.source)
    answers = len({c["answer"] for c in cs})
    if len(cs) < 2 * args.labels:
        print(f"skipped: {len(cs)} labelled claims, too few")
        return 0
    rows = draws(cs, args.labels, args.draws, args.seed)
    no_worse = sum(r["brier_cal"] <= r["brier_raw"] + 1e-12 for r in rows)  # float noise
    print(
        f"{args.source or 'LFQA'}: {answers} answers, {len(cs)} claims "
        f"({sum(c['y'] for c in cs)} supported); "
        f"{args.draws} draws of {args.labels} labels, measured on the rest"
    )
    print(f"{'':28} {'raw P':>8} {'calibrated':>11}")
    for name in ("brier", "log_loss", "ece"):
        raw = statistics.fmean(r[f"{name}_raw"] for r in rows)
        cal = statistics.fmean(r[f"{name}_cal"] for r in rows)
        print(f"{name + ' (mean over draws)':28} {raw:8.4f} {cal:11.4f}")
    print(
        f"{'ECE of a calibrated judge':28} {'':8} "
        f"{statistics.fmean(r['ece_calibrated_mean'] for r in rows):11.4f} (mean), "
        f"{statistics.fmean(r['ece_calibrated_q90'] for r in rows):.4f} (90th percentile)"
    )
    worst = max(r["brier_cal"] - r["brier_raw"] for r in rows)
    scaled = sum(r["scaled"] for r in rows)
    print(
        f"Brier after <= raw on the rest: {no_worse}/{args.draws} draws (target >= 18); "
        f"largest loss {worst:+.4f}; calibrate scaled P in {scaled:.0f}/{args.draws} draws"
    )
    platt_ok = sum(r["brier_platt"] <= r["brier_raw"] + 1e-12 for r in rows)
    print(
        f"Platt always applied (calibrate before the held-out Brier check): Brier "
        f"{statistics.fmean(r['brier_platt'] for r in rows):.4f}, no worse than raw in "
        f"{platt_ok}/{args.draws} draws"
    )
    shift = shifted(cs, max(args.labels, 100), args.seed, args.shift_to)
    em = shift["data_prior_em"]
    found = "no shift, P stays raw" if em is None else f"EM finds {em:.3f}"
    print(
        f"prior shift (the rest thinned to {args.shift_to:.0%} supported): labels "
        f"{shift['labels_prior']:.3f} supported, {found} "
        f"(true {shift['data_prior_true']:.3f}); Brier raw {shift['brier_raw']:.4f}, "
        f"calibrated {shift['brier_cal']:.4f}, calibrated + shift {shift['brier_shifted']:.4f}"
    )
    if args.summary:
        args.summary.parent.mkdir(parents=True, exist_ok=True)
        summary = {"answers": answers, "claims": len(cs), "draws": rows, "no_worse": no_worse}
        args.summary.write_text(json.dumps(summary | {"prior_shift": shift}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
