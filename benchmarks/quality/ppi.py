"""Prediction-powered inference (``ragrecall.stats.ppi_mean`` / ``ppi_difference``) by simulation.

    python -m benchmarks.quality.ppi [--draws 1000] [--seed 0] [--summary benchmarks/out/ppi.json]

No judge and no data. Each draw builds a fresh dataset of N answers (3 to 10 claims each, the
answer's share of supported claims ~ Beta(2, 1.2)) with a simulated judge that calls a claim
supported with probability sigmoid(generous + sharp * truth + u), u ~ N(0, 0.5) per answer (so an
answer's errors are correlated), labels a simple random sample of n answers, and compares the
90 % intervals with the people's mean over the N answers. Per setting: rho (answer-level
correlation of judge and people over the dataset), the judge's raw bias and its own standard
error, the coverage of the PPI, labels-only and raw-judge intervals, the width ratio PPI /
labels-only beside two theoretical ones (sqrt(1 - rho^2): this design, the judge's mean known
for the whole dataset; sqrt(1 - rho^2 N / (N + n)): PPI++ with a separate unlabelled sample),
the mean absolute error of the corrected, labels-only and raw means, and the mean lambda. The
``ab`` setting does the same for a paired difference where the judge is generous on A's answers
and strict on B's.

    python -m benchmarks.quality.ppi --real benchmarks/out/lfqa600 [--real-draws 20]

Real data: the LFQA answers scored by ``benchmarks/quality/judge_scores.py`` (the judge's recall of
every scored answer; people's recall from the majority labels). Each draw labels a simple
random sample of 40 answers (``--labels``) and compares the intervals with people's mean over
every scored answer. ``pairs`` does the same for a paired difference: two systems' answers to
the same questions (every pair of the six systems, pooled), 40 labelled questions.

    python -m benchmarks.quality.ppi --sufficiency benchmarks/out/suff-heldout.jsonl

Sufficiency's answerable rate: the scored ``sufficiency`` rows of a ``sufficiency.py run`` file,
each with the person's 0/1 label (answerable or not) from the answerability sets, joined by id
through ``sufficiency.py``'s own loader (the label the file carries when the sets are absent).
The judge's value is its verdict (1 when every sub-question is answered, ``score == 1``; the
``binary`` row) or its graded ``p_sufficient`` (the ``p`` row). ``--draws`` draws each label a
simple random sample of ``--labels`` rows, as ``--real`` does: without replacement, the target
the people's rate over all N scored rows. N is small (68 in the heldout run) and n = 40 is most
of it, so the finite population matters: ``ppi_mean``'s standard errors carry the
finite-population correction sqrt(1 - n/N), and a draw's labelled rows overlap most others'.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks._common import commit, write_json
from benchmarks.quality import sufficiency
from ragrecall.stats import ppi_difference, ppi_mean, t_quantile


@dataclass(frozen=True)
class Setting:
    name: str
    size: int
    labels: int
    generous: float
    sharp: float
    paired: bool = False


SETTINGS = [
    Setting("up", 600, 40, -0.5, 4.0),
    Setting("down", 600, 40, -2.5, 4.0),
    Setting("rho~0.8", 600, 40, -1.0, 4.0),
    Setting("weak", 600, 40, -1.0, 1.5),
    Setting("useless", 600, 40, 0.0, 0.0),
    Setting("up n=20", 600, 20, -0.5, 4.0),
    Setting("up n=80", 600, 80, -0.5, 4.0),
    Setting("up N=200", 200, 40, -0.5, 4.0),
    Setting("ab", 600, 40, -0.5, 4.0, paired=True),
]


def judge_recall(rng: random.Random, truth: list[bool], generous: float, sharp: float) -> float:
    shift = generous + rng.gauss(0, 0.5)
    calls = [rng.random() < 1 / (1 + math.exp(-(shift + sharp * t))) for t in truth]
    return sum(calls) / len(calls)


def answer(rng: random.Random, share: float, claims: int) -> list[bool]:
    return [rng.random() < share for _ in range(claims)]


def dataset(rng: random.Random, s: Setting) -> tuple[list[float], list[float]]:
    """People's and the judge's recall of each answer."""
    human, judge = [], []
    for _ in range(s.size):
        claims = rng.randint(3, 10)
        truth = answer(rng, rng.betavariate(2, 1.2), claims)
        human.append(sum(truth) / claims)
        judge.append(judge_recall(rng, truth, s.generous, s.sharp))
    return human, judge


Pairs = list[tuple[float, float]]


def paired_dataset(rng: random.Random, s: Setting) -> tuple[Pairs, Pairs]:
    """(A, B) recall per task, people's and the judge's: B retrieves less (its answers' share
    of supported claims is 0.85 of A's), the judge is generous on A and strict on B."""
    human, judge = [], []
    for _ in range(s.size):
        share, claims = rng.betavariate(2, 1.2), rng.randint(3, 10)
        a, b = answer(rng, share, claims), answer(rng, 0.85 * share, claims)
        human.append((sum(a) / claims, sum(b) / claims))
        judge.append((
            judge_recall(rng, a, s.generous, s.sharp),
            judge_recall(rng, b, s.generous - 2.0, s.sharp),
        ))  # fmt: skip
    return human, judge


def run(s: Setting, draws: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    rows: list[dict[str, float]] = []
    for _ in range(draws):
        idx = rng.sample(range(s.size), s.labels)
        if s.paired:
            human_pairs, judge_pairs = paired_dataset(rng, s)
            human = [a - b for a, b in human_pairs]
            judge = [a - b for a, b in judge_pairs]
            r = ppi_difference(
                judge_pairs, [judge_pairs[i] for i in idx], [human_pairs[i] for i in idx]
            )
        else:
            human, judge = dataset(rng, s)
            r = ppi_mean(judge, [judge[i] for i in idx], [human[i] for i in idx])
        target = statistics.fmean(human)
        low, high = r.labels_only
        raw = statistics.fmean(judge)
        raw_se = statistics.stdev(judge) / math.sqrt(s.size)
        raw_half = t_quantile(0.95, s.size - 1) * raw_se
        rho = statistics.correlation(human, judge)
        labels_mean = statistics.fmean(human[i] for i in idx)
        rows.append({
            "rho": rho, "bias": raw - target, "raw_se": raw_se,
            "cover": r.low <= target <= r.high, "cover_labels": low <= target <= high,
            "cover_raw": abs(raw - target) <= raw_half,
            "ratio": (r.high - r.low) / (high - low),
            "theory": math.sqrt(1 - rho**2),
            "theory_ppi": math.sqrt(1 - rho**2 * s.size / (s.size + s.labels)),
            "mae": abs(r.estimate - target), "mae_labels": abs(labels_mean - target),
            "mae_raw": abs(raw - target), "lambda": r.lambda_,
        })  # fmt: skip
    out: dict[str, Any] = {"setting": s.name, "N": s.size, "n": s.labels, "draws": draws}
    for key in rows[0]:
        out[key] = statistics.fmean(float(row[key]) for row in rows)
    return out


def real_scores(folder: Path) -> dict[str, tuple[float, float]]:
    """Per answer id: (people's recall, the judge's recall), for every scored answer; an
    AttributionBench id is prefixed with its source."""
    gold, source = {}, {}
    for line in (folder / "gold.jsonl").open():
        row = json.loads(line)
        gold[row["sample_id"]] = sum(row["gold"]) / len(row["gold"])
        source[row["sample_id"]] = row.get("source")
    scores = {}
    for line in (folder / "results.jsonl").open():
        row = json.loads(line)
        result = row["results"]["context_recall"]
        if result["score"] is not None:
            key = row["sample"]["sample_id"]
            name = f"{source[key]}:{key}" if source[key] else key
            scores[name] = (gold[key], result["score"])
    return scores


def real_pairs(scores: dict[str, tuple[float, float]]) -> tuple[Pairs, Pairs]:
    """Every pair of systems that answered the same question, both answers scored."""
    by_question: dict[str, dict[str, tuple[float, float]]] = {}
    for key, value in scores.items():
        system, question = key.split(":")
        by_question.setdefault(question, {})[system] = value
    human, judge = [], []
    for answers in by_question.values():
        systems = sorted(answers)
        for i, a in enumerate(systems):
            for b in systems[i + 1 :]:
                human.append((answers[a][0], answers[b][0]))
                judge.append((answers[a][1], answers[b][1]))
    return human, judge


def sufficiency_sets(
    path: Path, threshold: float | None = None
) -> list[tuple[str, list[float], list[float]]]:
    """(name, people's 0/1 labels, the judge's values) of the scored ``sufficiency`` rows of a
    ``sufficiency.py run`` file: the judge's verdict (``binary``; replayed at ``threshold``
    where given) and its ``p_sufficient``."""
    items = [i for i in sufficiency._items([path]) if i["metric"] == "sufficiency"]
    if threshold is not None:
        items = sufficiency.at_threshold(items, threshold)
    root = sufficiency.bench_data(None)
    if root is None:
        print("the answerability sets are absent: the labels the file carries")
        labels = {i["id"]: i["sufficient"] for i in items}
    else:  # every row of both splits: per_source above any source's size
        rows = [r for split in ("dev", "heldout") for r in sufficiency.pick(root, split, 10**9, 0)]
        labels = {r["id"]: r["sufficient"] for r in rows}
    human = [float(labels[i["id"]]) for i in items]
    binary = [float(i["score"] == 1.0) for i in items]
    graded = [float(i["p_sufficient"] or 0.0) for i in items]
    return [("suff binary", human, binary), ("suff p", human, graded)]


def run_real(name: str, human_all: list[Any], judge_all: list[Any], labels: int, draws: int,
             seed: int) -> dict[str, Any]:  # fmt: skip
    rng = random.Random(seed)
    paired = isinstance(human_all[0], tuple)
    human = [a - b for a, b in human_all] if paired else human_all
    judge = [a - b for a, b in judge_all] if paired else judge_all
    size, target = len(human), statistics.fmean(human)
    raw = statistics.fmean(judge)
    raw_se = statistics.stdev(judge) / math.sqrt(size)
    raw_half = t_quantile(0.95, size - 1) * raw_se
    rho = statistics.correlation(human, judge)
    rows = []
    for _ in range(draws):
        idx = rng.sample(range(size), labels)
        estimator = ppi_difference if paired else ppi_mean
        r = estimator(judge_all, [judge_all[i] for i in idx], [human_all[i] for i in idx])
        low, high = r.labels_only
        rows.append({
            "cover": r.low <= target <= r.high, "cover_labels": low <= target <= high,
            "ratio": (r.high - r.low) / (high - low), "mae": abs(r.estimate - target),
            "mae_labels": abs(statistics.fmean(human[i] for i in idx) - target),
            "lambda": r.lambda_,
        })  # fmt: skip
    out: dict[str, Any] = {
        "setting": name, "N": size, "n": labels, "draws": draws, "rho": rho,
        "bias": raw - target, "raw_se": raw_se, "cover_raw": abs(raw - target) <= raw_half,
        "theory": math.sqrt(1 - rho**2),
        "theory_ppi": math.sqrt(1 - rho**2 * size / (size + labels)),
        "mae_raw": abs(raw - target), "people_mean": target, "judge_mean": raw,
    }  # fmt: skip
    for key in rows[0]:
        out[key] = statistics.fmean(float(row[key]) for row in rows)
    return out


def print_row(r: dict[str, Any]) -> None:
    print(
        f"{r['setting']:10} {r['N']:4} {r['n']:3} {r['rho']:5.2f} {r['bias']:+7.3f} "
        f"{r['raw_se']:6.3f} {r['cover']:6.1%} {r['cover_labels']:6.1%} "
        f"{float(r['cover_raw']):6.1%} {r['ratio']:6.3f} {r['theory']:10.3f} "
        f"{r['theory_ppi']:6.3f} {r['mae']:6.3f} {r['mae_labels']:6.3f} "
        f"{r['mae_raw']:6.3f} {r['lambda']:6.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--real", type=Path, help="a folder written by judge_scores.py")
    parser.add_argument("--real-draws", type=int, default=20)
    parser.add_argument("--sufficiency", type=Path, help="a file written by sufficiency.py run")
    parser.add_argument(
        "--threshold", type=float, help="replay Sufficiency's verdicts at this threshold"
    )
    parser.add_argument("--labels", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--summary", type=Path)
    args = parser.parse_args()
    load_start = os.getloadavg()
    print(f"commit {commit()}, {args.draws} draws per setting, load average {load_start}")
    print(
        f"{'setting':10} {'N':>4} {'n':>3} {'rho':>5} {'bias':>7} {'raw se':>6} "
        f"{'cover':>6} {'labels':>6} {'raw':>6} {'ratio':>6} {'sqrt(1-r2)':>10} "
        f"{'PPI++':>6} {'MAE':>6} {'labels':>6} {'raw':>6} {'lambda':>6}"
    )
    results = []
    if args.sufficiency:
        for name, h, j in sufficiency_sets(args.sufficiency, args.threshold):
            r = run_real(name, h, j, args.labels, args.draws, args.seed)
            results.append(r)
            print_row(r)
        binary, graded = (x["judge_mean"] for x in results)
        print(f"N = {len(h)} scored rows, people's rate {r['people_mean']:.3f}, "
              f"the judge's {binary:.3f} (binary) and {graded:.3f} (p)")  # fmt: skip
    elif args.real:
        scores = real_scores(args.real)
        sets: list[tuple[str, list[Any], list[Any]]] = []
        if (args.real / "gold.jsonl").open().readline().count('"source"'):  # AttributionBench
            for source in sorted({key.split(":")[0] for key in scores}):
                mine = [v for k, v in scores.items() if k.split(":")[0] == source]
                sets.append((source, [h for h, _ in mine], [j for _, j in mine]))
        else:
            human_pairs, judge_pairs = real_pairs(scores)
            sets.append(("lfqa", [h for h, _ in scores.values()], [j for _, j in scores.values()]))
            sets.append(("lfqa pairs", human_pairs, judge_pairs))
        for name, h, j in sets:
            if len(h) < 2 * args.labels:
                print(f"{name}: {len(h)} scored, fewer than twice {args.labels} labels; skipped")
                continue
            for draws in sorted({args.real_draws, args.draws}):
                r = run_real(f"{name}", h, j, args.labels, draws, args.seed)
                results.append(r)
                print_row(r)
    else:
        for i, s in enumerate(SETTINGS):
            r = run(s, args.draws, args.seed + i)
            results.append(r)
            print_row(r)
    load_end = os.getloadavg()
    print(f"load average at end {load_end}")
    write_json(args.summary, {"commit": commit(), "draws": args.draws, "seed": args.seed,
                              "load_avg_start": load_start, "load_avg_end": load_end,
                              "settings": results})  # fmt: skip


if __name__ == "__main__":
    main()
