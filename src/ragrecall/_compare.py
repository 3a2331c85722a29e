"""``ragrecall compare A.jsonl B.jsonl``: is B's recall really different from A's?

Statistics in plain Python (no scipy): paired differences B - A on the samples both files
scored (matched by ``Sample.key()``), a seeded percentile-bootstrap confidence interval for
their mean, a paired sign-flip permutation test (exact up to 16 non-zero differences, Monte
Carlo beyond) for the verdict, and the Wilcoxon signed-rank test (exact distribution up to 50
non-zero differences, normal approximation with tie correction beyond) as a second opinion.
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ._errors import SampleError
from ._results_file import Record, read_records

__all__ = [
    "ClaimChange",
    "Comparison",
    "WilcoxonResult",
    "add_compare_command",
    "bootstrap_ci",
    "compare_records",
    "sign_flip_test",
    "wilcoxon_signed_rank",
]

Verdict = Literal["better", "worse", "no significant difference"]
EXACT_SIGN_FLIP_MAX = 16
EXACT_WILCOXON_MAX = 50
_TOLERANCE = 1e-12


# --- Statistics ---------------------------------------------------------------------------


def mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def bootstrap_ci(
    values: Sequence[float],
    *,
    resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval for the mean of ``values`` (seeded, reproducible)."""
    if not values:
        raise ValueError("bootstrap_ci needs at least one value")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), not {confidence}")
    rng = random.Random(seed)
    n = len(values)
    means = sorted(math.fsum(rng.choices(values, k=n)) / n for _ in range(resamples))
    tail = (1 - confidence) / 2
    return _quantile(means, tail), _quantile(means, 1 - tail)


def _quantile(ordered: Sequence[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default)."""
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def sign_flip_test(
    diffs: Sequence[float],
    *,
    resamples: int = 10_000,
    seed: int = 0,
    exact_max: int = EXACT_SIGN_FLIP_MAX,
) -> float:
    """Two-sided p-value of the paired permutation test on the mean difference.

    Under the null hypothesis each difference is as likely to have either sign. Exact
    (all 2^n sign patterns) for up to ``exact_max`` non-zero differences; otherwise Monte Carlo
    with ``resamples`` seeded draws and the (count + 1) / (resamples + 1) correction.
    """
    nonzero = [d for d in diffs if d != 0]
    if not nonzero:
        return 1.0
    observed = abs(math.fsum(nonzero))
    if len(nonzero) <= exact_max:
        extreme = 0
        for signs in itertools.product((1, -1), repeat=len(nonzero)):
            total = abs(math.fsum(s * d for s, d in zip(signs, nonzero, strict=True)))
            extreme += total >= observed - _TOLERANCE
        return extreme / (1 << len(nonzero))
    rng = random.Random(seed)
    extreme = 0
    for _ in range(resamples):
        total = abs(math.fsum(d if rng.random() < 0.5 else -d for d in nonzero))
        extreme += total >= observed - _TOLERANCE
    return (extreme + 1) / (resamples + 1)


@dataclass(frozen=True)
class WilcoxonResult:
    """``statistic``: W+, the sum of the ranks of the positive differences; ``n``: the non-zero
    differences ranked; ``z``: the normal score (also given when the p-value is exact)."""

    statistic: float
    n: int
    z: float
    p_value: float
    method: Literal["exact", "normal"]


def ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks; ties get the mean of the ranks they span."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def wilcoxon_signed_rank(
    diffs: Sequence[float],
    *,
    method: Literal["auto", "exact", "normal"] = "auto",
    correction: bool = False,
) -> WilcoxonResult:
    """Two-sided Wilcoxon signed-rank test; zero differences are dropped (Wilcoxon's method).

    ``exact``: the null distribution of W+ over all sign patterns, by dynamic programming on
    the (tie-averaged) ranks, so it stays exact with ties. ``normal``: z with the tie-corrected
    variance n(n+1)(2n+1)/24 - sum(t^3 - t)/48, optionally with a continuity correction.
    ``auto``: exact up to 50 non-zero differences.
    """
    nonzero = [d for d in diffs if d != 0]
    n = len(nonzero)
    if n == 0:
        return WilcoxonResult(0.0, 0, 0.0, 1.0, "exact")
    rank = ranks([abs(d) for d in nonzero])
    w_plus = math.fsum(r for r, d in zip(rank, nonzero, strict=True) if d > 0)
    expected = n * (n + 1) / 4
    ties: dict[float, int] = {}
    for r in rank:
        ties[r] = ties.get(r, 0) + 1
    variance = n * (n + 1) * (2 * n + 1) / 24 - sum(t**3 - t for t in ties.values()) / 48
    deviation = abs(w_plus - expected)
    z = 0.0 if variance <= 0 else (w_plus - expected) / math.sqrt(variance)
    if method == "exact" or (method == "auto" and n <= EXACT_WILCOXON_MAX):
        return WilcoxonResult(w_plus, n, z, _exact_wilcoxon_p(rank, deviation), "exact")
    if variance <= 0:
        return WilcoxonResult(w_plus, n, 0.0, 1.0, "normal")
    shifted = max(deviation - (0.5 if correction else 0.0), 0.0)
    p = math.erfc(shifted / math.sqrt(variance) / math.sqrt(2))
    return WilcoxonResult(w_plus, n, z, min(p, 1.0), "normal")


def _exact_wilcoxon_p(rank: Sequence[float], deviation: float) -> float:
    """P(|W+ - E| >= deviation) with every sign pattern equally likely. Ranks are multiples
    of 1/2, so twice W+ is an integer and the distribution is a count per integer."""
    doubled = [round(2 * r) for r in rank]
    counts = [1] + [0] * sum(doubled)
    reach = 0
    for r in doubled:
        reach += r
        for total in range(reach, r - 1, -1):
            counts[total] += counts[total - r]
    expected2 = sum(doubled) / 2
    extreme = sum(c for t, c in enumerate(counts) if abs(t - expected2) >= 2 * deviation - 1e-9)
    return min(extreme / (1 << len(rank)), 1.0)


# --- Comparing two results files ----------------------------------------------------------


@dataclass(frozen=True)
class Pair:
    key: str
    question: str
    a: float
    b: float

    @property
    def diff(self) -> float:
        return self.b - self.a


@dataclass(frozen=True)
class ClaimChange:
    """Claims of one shared sample that B supports and A did not (recovered), and the reverse
    (lost); only claims with the same text in both runs are compared."""

    key: str
    question: str
    recovered: list[str]
    lost: list[str]


@dataclass
class Comparison:
    metric: str
    n_a: int
    n_b: int
    n_shared: int
    pairs: list[Pair]
    mean_a: float | None
    mean_b: float | None
    mean_diff: float | None
    ci: tuple[float, float] | None
    confidence: float
    p_value: float | None
    wilcoxon: WilcoxonResult | None
    alpha: float
    verdict: Verdict
    changes: list[ClaimChange] = field(default_factory=list)
    unscorable_a: int = 0
    unscorable_b: int = 0


def compare_records(
    a: Sequence[Record],
    b: Sequence[Record],
    *,
    metric: str | None = None,
    alpha: float = 0.05,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
) -> Comparison:
    """Pair the samples of ``a`` and ``b`` by key and test whether B's scores differ."""
    if not a or not b:
        raise SampleError("both results files need at least one record")
    if metric is None:
        shared_metrics = [m for m in a[0].results if m in b[0].results]
        if not shared_metrics:
            raise SampleError(
                f"no metric in common: A has {list(a[0].results)}, B has {list(b[0].results)}"
            )
        metric = shared_metrics[0]
    for name, records in (("A", a), ("B", b)):
        if metric not in records[0].results:
            raise SampleError(f"{name} holds no {metric!r} results")
    by_key = {r.key: r for r in a}
    shared = [(by_key[r.key], r) for r in b if r.key in by_key]
    pairs: list[Pair] = []
    changes: list[ClaimChange] = []
    unscorable_a = unscorable_b = 0
    for ra, rb in shared:
        sa, sb = ra.score(metric), rb.score(metric)
        unscorable_a += sa is None
        unscorable_b += sb is None
        question = rb.sample.user_input or ""
        if sa is not None and sb is not None:
            pairs.append(Pair(rb.key, question, sa, sb))
        change = _claim_change(ra, rb, metric)
        if change.recovered or change.lost:
            changes.append(change)
    diffs = [p.diff for p in pairs]
    if not diffs:
        return Comparison(
            metric,
            len(a),
            len(b),
            len(shared),
            pairs,
            None,
            None,
            None,
            None,
            confidence,
            None,
            None,
            alpha,
            "no significant difference",
            changes,
            unscorable_a,
            unscorable_b,
        )
    mean_diff = mean(diffs)
    p_value = sign_flip_test(diffs, resamples=resamples, seed=seed)
    verdict: Verdict = "no significant difference"
    if p_value < alpha and mean_diff != 0:
        verdict = "better" if mean_diff > 0 else "worse"
    return Comparison(
        metric=metric,
        n_a=len(a),
        n_b=len(b),
        n_shared=len(shared),
        pairs=pairs,
        mean_a=mean([p.a for p in pairs]),
        mean_b=mean([p.b for p in pairs]),
        mean_diff=mean_diff,
        ci=bootstrap_ci(diffs, resamples=resamples, confidence=confidence, seed=seed),
        confidence=confidence,
        p_value=p_value,
        wilcoxon=wilcoxon_signed_rank(diffs),
        alpha=alpha,
        verdict=verdict,
        changes=changes,
        unscorable_a=unscorable_a,
        unscorable_b=unscorable_b,
    )


def _claim_change(a: Record, b: Record, metric: str) -> ClaimChange:
    ra, rb = a.results[metric], b.results[metric]
    both = set(ra.claims) & set(rb.claims)
    missing_a, missing_b = set(ra.missing), set(rb.missing)
    recovered = [c for c in rb.claims if c in both and c in missing_a and c not in missing_b]
    lost = [c for c in rb.claims if c in both and c in missing_b and c not in missing_a]
    return ClaimChange(b.key, b.sample.user_input or "", recovered, lost)


# --- The command --------------------------------------------------------------------------


def add_compare_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "compare",
        help="compare two results files (A = baseline, B = candidate) sample by sample",
        description="Paired comparison of two `ragrecall eval --out` files on their shared "
        "samples: mean difference B - A with a bootstrap confidence interval, a paired "
        "permutation test, and the claims B recovers and loses. Exit 1 with --fail-if-worse "
        "when B is significantly worse; 2 on bad input.",
    )
    parser.add_argument("a", type=Path, help="baseline results (.jsonl from eval --out)")
    parser.add_argument("b", type=Path, help="candidate results")
    parser.add_argument("--metric", help="metric to compare (default: the first they share)")
    parser.add_argument("--alpha", type=float, default=0.05, help="significance level (0.05)")
    parser.add_argument("--resamples", type=int, default=10_000, help="bootstrap resamples")
    parser.add_argument("--seed", type=int, default=0, help="random seed (0)")
    parser.add_argument(
        "--fail-if-worse",
        action="store_true",
        help="exit 1 when B is significantly worse than A (a regression gate)",
    )
    parser.add_argument("--report", type=Path, help="write an HTML comparison report here")
    parser.add_argument(
        "--show-claims",
        type=int,
        default=10,
        metavar="N",
        help="samples whose claims changed to print (10)",
    )
    parser.set_defaults(func=run_compare)


def run_compare(args: argparse.Namespace, console: Console | None = None) -> int:
    console = console or Console()
    try:
        if not 0 < args.alpha < 1:
            raise SampleError(f"--alpha must be in (0, 1), not {args.alpha}")
        comparison = compare_records(
            read_records(args.a),
            read_records(args.b),
            metric=args.metric,
            alpha=args.alpha,
            resamples=args.resamples,
            seed=args.seed,
        )
    except (OSError, SampleError) as err:
        console.print(f"[red]error:[/] {escape(str(err))}", soft_wrap=True)
        return 2
    print_comparison(comparison, console, show_claims=args.show_claims)
    if args.report:
        from ._html import compare_report

        args.report.write_text(compare_report(comparison, str(args.a), str(args.b)), "utf-8")
        console.print(f"report: {args.report}")
    return 1 if args.fail_if_worse and comparison.verdict == "worse" else 0


def print_comparison(c: Comparison, console: Console, show_claims: int = 10) -> None:
    table = Table(title=f"{c.metric}: B vs A", title_justify="left")
    table.add_column("")
    table.add_column("value", justify="right")
    table.add_row("samples A / B / shared", f"{c.n_a} / {c.n_b} / {c.n_shared}")
    table.add_row("paired (both scored)", str(len(c.pairs)))
    if c.unscorable_a or c.unscorable_b:
        table.add_row("unscorable A / B", f"{c.unscorable_a} / {c.unscorable_b}")
    if c.mean_diff is not None and c.ci is not None and c.wilcoxon is not None:
        table.add_row("mean A / B", f"{c.mean_a:.3f} / {c.mean_b:.3f}")
        table.add_row(
            "mean difference B - A",
            f"{c.mean_diff:+.3f}  [{c.ci[0]:+.3f}, {c.ci[1]:+.3f}] {c.confidence:.0%} CI",
        )
        table.add_row(
            "improved / worse / same", "{} / {} / {}".format(*_counts([p.diff for p in c.pairs]))
        )
        table.add_row("permutation test p", f"{c.p_value:.4g}")
        table.add_row(f"Wilcoxon signed-rank p ({c.wilcoxon.method})", f"{c.wilcoxon.p_value:.4g}")
    console.print(table)
    colour = {"better": "green", "worse": "red"}.get(c.verdict, "yellow")
    console.print(f"verdict: [bold {colour}]{c.verdict}[/] (alpha {c.alpha})")
    for change in c.changes[:show_claims]:
        console.print(f"[bold]{escape(change.question or change.key)}[/]")
        for claim in change.recovered:
            console.print(f"  [green]+ recovered[/] {escape(claim)}", highlight=False)
        for claim in change.lost:
            console.print(f"  [red]- lost[/] {escape(claim)}", highlight=False)
    if len(c.changes) > show_claims:
        console.print(f"... and {len(c.changes) - show_claims} more samples with changed claims")


def _counts(diffs: Sequence[float]) -> tuple[int, int, int]:
    return (sum(d > 0 for d in diffs), sum(d < 0 for d in diffs), sum(d == 0 for d in diffs))
