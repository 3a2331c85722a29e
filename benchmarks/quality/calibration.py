"""Does calibrating on a few labels help, and are the reported uncertainties honest?

    python -m benchmarks.quality.calibration benchmarks/out/cal-lfqa.jsonl \
        benchmarks/out/cal-ab.jsonl \
        [--draws 20] [--labels 40]

The item files come from ``agreement.py --out`` (the embedded judge's verdicts, each with
P(supported) and the word check, next to the people's labels). No judge is called here. For
each labelled set (LFQA-Verification sentences; each AttributionBench source), ``--draws``
times: draw ``--labels`` labelled claims at random, ``calibrate()`` on them as a person's labels
would be, then on the rest of that set measure

- balanced accuracy with the calibrated decision minus with the defaults (target: mean >= -0.01);
- whether the agreement interval reported from the drawn labels (balanced accuracy of the
  default decision, 95 % bootstrap) covers the balanced accuracy measured on the rest;
- the expected calibration error of P(supported), raw and scaled (target after: <= 0.05);

and, for LFQA answers, how often the 90 % interval of each answer's recall (from its claims'
scaled P(supported), the profile fitted on a draw that excludes the answer's claims) covers the
people's recall (target: 85-95 %). Prints the figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks._common import OUT

if TYPE_CHECKING:
    from ragrecall.calibration import Decision, Label

DEFAULT = (0.55, 0.3)  # ContextRecall's support_threshold and lexical_weight


def claims(path: Path) -> dict[str, list[dict[str, Any]]]:
    """Labelled claims with the judge's numbers, grouped by set (LFQA, or the AB source)."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for line in path.read_text().splitlines():
        item = json.loads(line)
        result = item["result"]
        if result["status"] != "scored":
            continue
        name = "lfqa" if item["bench"] == "lfqa" else f"ab:{item.get('source')}"
        for n, (verdict, gold) in enumerate(zip(result["verdicts"], item["gold"], strict=True)):
            if verdict["p_supported"] is None:
                continue
            groups[name].append(
                {
                    "answer": item["id"],
                    "key": f"{item['id']}#{n}",
                    "claim": verdict["claim"],
                    "gold": bool(gold),
                    "p": verdict["p_supported"],
                    "overlap": verdict["word_overlap"] or 0.0,
                    "attributed": verdict["attributed"],
                }
            )
    return groups


def label(c: dict[str, Any]) -> Label:
    from ragrecall.calibration import Label

    return Label(
        key=c["key"],
        claim=c["claim"],
        label="supported" if c["gold"] else "not_supported",
        attributed=c["attributed"],
        p_supported=c["p"],
        word_overlap=c["overlap"],
        judge="local",
    )


def decide(decision: Decision, cs: list[dict[str, Any]]) -> list[bool]:
    return [decision.counts(c["p"], c["overlap"]) for c in cs]


def one_set(name: str, cs: list[dict[str, Any]], draws: int, n: int) -> dict[str, Any]:
    from ragrecall import calibrate
    from ragrecall.calibration import Decision
    from ragrecall.stats import balanced_accuracy, expected_calibration_error

    rng = random.Random(f"{name}-{n}")
    diffs, covered, ece_before, ece_after, moved = [], 0, [], [], 0
    for _ in range(draws):
        drawn = rng.sample(range(len(cs)), n)
        chosen = set(drawn)
        rest = [c for i, c in enumerate(cs) if i not in chosen]
        profile = calibrate([label(cs[i]) for i in drawn], resamples=500)
        moved += profile.moved
        truth = [c["gold"] for c in rest]
        before = balanced_accuracy(truth, decide(Decision(*DEFAULT), rest))
        after = balanced_accuracy(truth, decide(profile.decision, rest))
        if before is not None and after is not None:
            diffs.append(after - before)
        reported = profile.agreement["before"].balanced_accuracy_ci
        if reported is not None and before is not None:
            covered += reported[0] <= before <= reported[1]
        ece_before.append(expected_calibration_error([c["p"] for c in rest], truth) or 0.0)
        ece_after.append(
            expected_calibration_error([profile.scale(c["p"]) for c in rest], truth) or 0.0
        )
    return {
        "set": name,
        "claims": len(cs),
        "positives": sum(c["gold"] for c in cs),
        "ba_diff_mean": statistics.fmean(diffs) if diffs else None,
        "ba_diff_sd": statistics.stdev(diffs) if len(diffs) > 1 else None,
        "ba_diff_min": min(diffs) if diffs else None,
        "moved": moved,
        "agreement_covered": covered,
        "draws": draws,
        "ece_before": statistics.fmean(ece_before),
        "ece_after": statistics.fmean(ece_after),
    }


def recall_coverage(cs: list[dict[str, Any]], draws: int, n: int) -> dict[str, float]:
    """Share of LFQA answers whose 90 % recall interval covers the people's recall, with raw
    and with scaled P(supported) (the profile fitted on claims of other answers)."""
    from ragrecall import calibrate
    from ragrecall.stats import share_interval

    by_answer: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for c in cs:
        by_answer[c["answer"]].append(c)
    rng = random.Random("coverage")
    hits = {"raw": 0, "calibrated": 0}
    total = 0
    for _ in range(draws):
        answers = sorted(by_answer)
        held = set(rng.sample(answers, max(1, len(answers) // 4)))
        pool = [c for a in answers if a not in held for c in by_answer[a]]
        profile = calibrate([label(c) for c in rng.sample(pool, min(n, len(pool)))], resamples=200)
        for a in held:
            items = by_answer[a]
            people = sum(c["gold"] for c in items) / len(items)
            for kind, scale in (("raw", lambda p: p), ("calibrated", profile.scale)):
                low, high = share_interval([scale(c["p"]) for c in items])
                hits[kind] += low <= people <= high
            total += 1
    return {kind: hit / total for kind, hit in hits.items()} | {"answers": total}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("items", nargs="+", type=Path)
    parser.add_argument("--draws", type=int, default=20)
    parser.add_argument("--labels", type=int, default=40)
    args = parser.parse_args()
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for path in args.items:
        for name, cs in claims(path).items():
            groups[name] += cs
    print(
        f"{'set':22} {'claims':>6} {'BA diff mean (sd, min)':>26} {'moved':>6} "
        f"{'CI covers':>10} {'ECE raw':>8} {'ECE cal':>8}"
    )
    out = []
    for name, cs in sorted(groups.items()):
        if len(cs) < args.labels + 20:
            print(f"{name:22} {len(cs):6}  too few claims for {args.labels} labels and a rest")
            continue
        r = one_set(name, cs, args.draws, args.labels)
        out.append(r)
        diff = (
            f"{r['ba_diff_mean']:+.3f} ({r['ba_diff_sd']:.3f}, {r['ba_diff_min']:+.3f})"
            if r["ba_diff_mean"] is not None
            else "n/a"
        )
        print(
            f"{name:22} {r['claims']:6} {diff:>26} {r['moved']:>3}/{r['draws']} "
            f"{r['agreement_covered']:>4}/{r['draws']}   {r['ece_before']:8.3f} "
            f"{r['ece_after']:8.3f}"
        )
    if "lfqa" in groups:
        cov = recall_coverage(groups["lfqa"], args.draws, args.labels)
        print(
            f"LFQA answers' 90% recall intervals covering the people's recall: raw "
            f"{cov['raw']:.1%}, calibrated {cov['calibrated']:.1%} ({cov['answers']:.0f} "
            "answer draws)"
        )
    target = OUT / "calibration.json"
    target.parent.mkdir(exist_ok=True)
    target.write_text(json.dumps(out, indent=1))
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
