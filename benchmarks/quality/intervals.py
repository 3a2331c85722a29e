"""Per-answer recall intervals against people's recall on the LFQA answers (issue 27 item 4).

    python -m benchmarks.quality.intervals --results /work/lfqa600/results.jsonl \
        --gold /work/lfqa600/gold.jsonl [--draws 20] [--labels 20 40] [--summary out.json]

The results file is ``lfqa_scores.py``'s (the embedded judge's context_recall result per
answer, with each claim's P(supported)); the gold file holds each answer's majority label per
claim. No judge is called. Without either file it says so and exits 0.

For each candidate 90 % interval it prints the share of answers whose interval covers the
people's recall (the share of their claims the annotators' majority called supported) and the
mean width. Without labels: the claims as independent (the Poisson-binomial, what results
carried before); the claims sharing one latent factor with correlation rho
(``share_interval(p, correlation=rho)``, each claim keeping its own P) for several fixed rho and
for rho estimated from the judge's own P's (their intraclass correlation over answers, no
labels); a beta-binomial on the claims' mean P with intraclass correlation rho; and a cluster
bootstrap over the chunks the claims cite. Choosing rho on the same answers it is measured on
flatters it, so rho is also chosen on a random half and measured on the other. With labels:
split-conformal intervals (judge recall +/- the 90 % quantile of |human - judge| over
``--labels`` random labelled answers), ``--draws`` draws, measured on the other answers; the
judge recall is the result's score, or the claims' mean P(supported).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks._common import scored_answers
from ragrecall.stats import conformal_interval, share_interval

LEVEL = 0.9
FIXED_RHO = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5)


def beta_binomial_pmf(n: int, mean: float, correlation: float) -> list[float]:
    """P(K = k), k = 0..n, K beta-binomial with this mean share and intraclass correlation (the
    candidate measured here; it ignores each claim's own P)."""
    m = min(max(mean, 1e-6), 1 - 1e-6)
    if correlation >= 1:
        return [1 - m] + [0.0] * (n - 1) + [m]
    size = (1 - correlation) / correlation  # alpha + beta
    a, b = m * size, (1 - m) * size
    log_b = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    pmf = [
        math.exp(
            math.lgamma(n + 1)
            - math.lgamma(k + 1)
            - math.lgamma(n - k + 1)
            + math.lgamma(k + a)
            + math.lgamma(n - k + b)
            - math.lgamma(n + a + b)
            - log_b
        )
        for k in range(n + 1)
    ]
    total = math.fsum(pmf)
    return [v / total for v in pmf]


@dataclass(frozen=True)
class Answer:
    sample_id: str
    p: list[float]
    chunks: list[str]  # the chunk each claim cites ("" for none)
    score: float
    human: float


def read(results: Path, gold: Path) -> list[Answer]:
    answers = []
    for sid, result, gold_labels in scored_answers(results, gold):
        verdicts = result["verdicts"]
        if any(v["p_supported"] is None for v in verdicts):
            continue
        answers.append(
            Answer(
                sample_id=sid,
                p=[v["p_supported"] for v in verdicts],
                chunks=[(v["chunk_ids"] or [""])[0] for v in verdicts],
                score=result["score"],
                human=sum(gold_labels) / len(gold_labels),
            )
        )
    return answers


def p_correlation(answers: Sequence[Answer]) -> float:
    """The intraclass correlation of P(supported) within answers (one-way ANOVA estimator),
    clipped to [0, 1]: how much more alike an answer's claims look to the judge than two
    claims of different answers. No labels."""
    groups = [a.p for a in answers if len(a.p) > 1]
    total = [p for g in groups for p in g]
    grand = statistics.fmean(total)
    k = len(groups)
    n = len(total)
    between = sum(len(g) * (statistics.fmean(g) - grand) ** 2 for g in groups) / (k - 1)
    within = sum((p - statistics.fmean(g)) ** 2 for g in groups for p in g) / (n - k)
    n0 = (n - sum(len(g) ** 2 for g in groups) / n) / (k - 1)
    rho = (between - within) / (between + (n0 - 1) * within)
    return min(max(rho, 0.0), 1.0)


def chunk_bootstrap(a: Answer, rng: random.Random, resamples: int = 400) -> tuple[float, float]:
    """Resample the answer's claims by the chunk they cite (a cluster bootstrap: the claims of
    one chunk come together), draw each with its P(supported), take the central 90 %."""
    clusters: dict[str, list[float]] = {}
    for p, c in zip(a.p, a.chunks, strict=True):
        clusters.setdefault(c, []).append(p)
    groups = list(clusters.values())
    shares = []
    for _ in range(resamples):
        drawn = [p for g in rng.choices(groups, k=len(groups)) for p in g]
        shares.append(sum(rng.random() < p for p in drawn) / len(drawn))
    shares.sort()
    tail = (1 - LEVEL) / 2
    return shares[int(tail * (resamples - 1))], shares[int((1 - tail) * (resamples - 1))]


def beta_binomial(p: Sequence[float], rho: float) -> tuple[float, float]:
    """The central 90 % of a beta-binomial share with the claims' mean P and correlation rho."""
    pmf = beta_binomial_pmf(len(p), statistics.fmean(p), rho)
    cdf, total = [], 0.0
    for v in pmf:
        total += v
        cdf.append(total)
    tail = (1 - LEVEL) / 2
    low = next(k for k, c in enumerate(cdf) if c > tail + 1e-12)
    high = next((k for k, c in enumerate(cdf) if c >= 1 - tail - 1e-12), len(p))
    return low / len(p), high / len(p)


def measure(
    answers: Sequence[Answer], interval: Callable[[Answer], tuple[float, float]]
) -> tuple[float, float]:
    cover, width = 0, 0.0
    for a in answers:
        low, high = interval(a)
        cover += low - 1e-9 <= a.human <= high + 1e-9
        width += high - low
    return cover / len(answers), width / len(answers)


def held_out_rho(
    answers: Sequence[Answer], draws: int, seed: int
) -> tuple[float, float, float, float, list[float]]:
    """Honest selection: on half the answers, the smallest rho of the grid whose interval covers
    at least 90 %; its coverage and width on the other half. Over ``draws`` random halves."""
    rng = random.Random(seed)
    grid = (0.0, *FIXED_RHO)
    covers, widths, chosen = [], [], []
    for _ in range(draws):
        order = list(answers)
        rng.shuffle(order)
        fit, test = order[: len(order) // 2], order[len(order) // 2 :]
        rho = next(
            (
                r
                for r in grid
                if measure(fit, lambda a, r=r: share_interval(a.p, correlation=r))[0] >= LEVEL  # type: ignore[misc]
            ),
            grid[-1],
        )
        c, w = measure(test, lambda a, r=rho: share_interval(a.p, correlation=r))  # type: ignore[misc]
        covers.append(c)
        widths.append(w)
        chosen.append(rho)
    return statistics.fmean(covers), min(covers), max(covers), statistics.fmean(widths), chosen


def conformal(
    answers: Sequence[Answer], n: int, draws: int, judge: Callable[[Answer], float], seed: int
) -> tuple[float, float, float, float]:
    """Mean, min and max coverage over draws, and mean width, on the unlabelled answers."""
    rng = random.Random(seed)
    covers, widths = [], []
    for _ in range(draws):
        labelled = set(rng.sample(range(len(answers)), n))
        pairs = [(judge(answers[i]), answers[i].human) for i in labelled]
        rest = [a for i, a in enumerate(answers) if i not in labelled]
        c, w = measure(rest, lambda a, p=pairs: conformal_interval(judge(a), p, LEVEL))  # type: ignore[misc]
        covers.append(c)
        widths.append(w)
    return statistics.fmean(covers), min(covers), max(covers), statistics.fmean(widths)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=Path("/work/lfqa600/results.jsonl"))
    parser.add_argument("--gold", type=Path, default=Path("/work/lfqa600/gold.jsonl"))
    parser.add_argument("--draws", type=int, default=20)
    parser.add_argument("--labels", type=int, nargs="+", default=[20, 40])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--summary", type=Path, help="write the figures as JSON here")
    args = parser.parse_args()
    if not args.results.is_file() or not args.gold.is_file():
        print(f"skipped: {args.results} or {args.gold} is absent")
        return 0
    answers = read(args.results, args.gold)
    if len(answers) < 20:
        print(f"skipped: {len(answers)} scored answers with gold labels, too few")
        return 0
    claims = sum(len(a.p) for a in answers)
    print(f"{len(answers)} LFQA answers, {claims} claims; 90 % intervals of people's recall")
    rows: list[dict[str, Any]] = []

    def row(name: str, cover: float, width: float, extra: str = "") -> None:
        rows.append({"interval": name, "coverage": cover, "width": width, "note": extra})
        print(f"{name:46} {cover:8.1%} {width:8.3f}  {extra}")

    print(f"{'interval':46} {'covers':>8} {'width':>8}")
    row("independent claims (Poisson-binomial)", *measure(answers, lambda a: share_interval(a.p)))
    for rho in FIXED_RHO:
        row(
            f"one factor, rho {rho}",
            *measure(answers, lambda a, r=rho: share_interval(a.p, correlation=r)),  # type: ignore[misc]
        )
    rho_p = p_correlation(answers)
    row(
        f"one factor, rho = ICC of P ({rho_p:.3f})",
        *measure(answers, lambda a: share_interval(a.p, correlation=rho_p)),
    )
    for rho in FIXED_RHO:
        row(
            f"beta-binomial on mean P, rho {rho}",
            *measure(answers, lambda a, r=rho: beta_binomial(a.p, r)),  # type: ignore[misc]
        )
    mean, low, high, width, chosen = held_out_rho(answers, args.draws, args.seed)
    row(
        "one factor, rho chosen on the other half",
        mean,
        width,
        f"{args.draws} splits: min {low:.1%}, max {high:.1%}; rho chosen {chosen}",
    )
    rng = random.Random(args.seed)
    row("chunk bootstrap", *measure(answers, lambda a: chunk_bootstrap(a, rng)))
    for n in args.labels:
        if len(answers) < n + 10:
            print(f"conformal with {n} labelled answers: skipped, {len(answers)} answers")
            continue
        judges = {"score": lambda a: a.score, "mean P": lambda a: statistics.fmean(a.p)}
        for name, judge in judges.items():
            mean, low, high, width = conformal(answers, n, args.draws, judge, args.seed)
            row(
                f"conformal on {name}, {n} labelled answers",
                mean,
                width,
                f"{args.draws} draws: min {low:.1%}, max {high:.1%}",
            )
    if args.summary:
        args.summary.parent.mkdir(parents=True, exist_ok=True)
        args.summary.write_text(json.dumps({"answers": len(answers), "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
