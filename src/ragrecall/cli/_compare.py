"""``ragrecall compare A.jsonl B.jsonl``: is B's recall really different from A's? A and B are
results files or Ray runs' output directories, in any mix.

With ``--labels`` (people's labels of whole answers of A and of B, from ``ragrecall review
--answers``), it also reports the difference corrected by them (``ppi_difference`` over the
paired tasks, labelled where both answers of a task are labelled), and ``--fail-if-worse``
decides on its interval."""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .._core.errors import SampleError
from ._inputs import check_writable

if TYPE_CHECKING:
    from rich.console import Console

    from .._analysis.compare import Comparison
    from .._analysis.corrected import CorrectedDifference

__all__ = ["add_compare_command", "print_comparison", "run_compare"]


def add_compare_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "compare",
        help="compare two runs' results (A = baseline, B = candidate) sample by sample",
        description="Paired comparison of two runs' results (`ragrecall eval --out` files or "
        "Ray runs' output directories), sample by sample "
        "(paired by sample id, else by question and reference): mean difference B - A with a "
        "bootstrap confidence interval, a paired permutation test, the effect size, the "
        "smallest difference this many pairs can detect, and the claims B recovers and loses. "
        "Exit 1 with --fail-if-worse when B is significantly worse; 2 on bad input, when too "
        "few samples pair, or when the runs used different claims.",
    )
    parser.add_argument(
        "a", type=Path, help="baseline results (.jsonl from eval --out, or a Ray run's directory)"
    )
    parser.add_argument("b", type=Path, help="candidate results")
    parser.add_argument("--metric", help="metric to compare (default: the first they share)")
    parser.add_argument("--alpha", type=float, default=0.05, help="significance level (0.05)")
    parser.add_argument("--resamples", type=int, default=10_000, help="bootstrap resamples")
    parser.add_argument("--seed", type=int, default=0, help="random seed (0)")
    parser.add_argument(
        "--fail-if-worse",
        action="store_true",
        help="exit 1 when B is significantly worse than A (a regression gate; with --labels: "
        "when the corrected difference's interval lies below 0)",
    )
    parser.add_argument(
        "--labels",
        type=Path,
        action="append",
        default=None,
        metavar="LABELS",
        help="people's labels of whole answers of A and B (exports of `ragrecall review "
        "--answers N` on each, same --seed; repeatable): report the difference corrected by "
        "them, with its 1 - alpha interval",
    )
    parser.add_argument(
        "--min-shared",
        type=float,
        default=0.9,
        metavar="SHARE",
        help="refuse (exit 2) when fewer than this share of samples pair (0.9)",
    )
    parser.add_argument(
        "--allow-other-claims",
        action="store_true",
        help="compare scores even where the runs used different claim sets (their claims "
        "are then not diffed)",
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
    from rich.markup import escape

    from .._analysis.answers import read_answer_labels
    from .._analysis.compare import compare_records
    from .._analysis.corrected import check_answers, corrected_difference
    from .._report.compare_report import compare_report
    from .._running.output import read_records
    from ._exit import GATE_FAILED, OK, USAGE_ERROR
    from ._text import PlainConsole

    console = console or PlainConsole()
    try:
        if _same_file(args.a, args.b):
            raise SampleError(
                f"{args.a} and {args.b} are the same file: compare a run with another run "
                "(a baseline and a candidate)"
            )
        if args.report:
            check_writable(args.report, "--report")
        if not 0 < args.alpha < 1:
            raise SampleError(f"--alpha must be in (0, 1), not {args.alpha}")
        if args.resamples < 1:
            raise SampleError(f"--resamples must be at least 1, not {args.resamples}")
        answers, other_labels = read_answer_labels(args.labels) if args.labels else ([], 0)
        a, b = read_records(args.a), read_records(args.b)
        if args.labels:
            runs = [((r.key, r.occurrence), r.content) for r in (*a, *b)]
            check_answers(answers, runs, None, other_labels)
        corrected: CorrectedDifference | None = None
        try:
            comparison = compare_records(
                a,
                b,
                metric=args.metric,
                alpha=args.alpha,
                resamples=args.resamples,
                seed=args.seed,
                min_shared=args.min_shared,
                allow_other_claims=args.allow_other_claims,
            )
            if args.labels:
                corrected = corrected_difference(
                    a, b, answers, comparison.metric, confidence=1 - args.alpha,
                    other_labels=other_labels,
                )  # fmt: skip
        except SampleError as err:  # says A and B: name the files
            raise SampleError(f"{err} (A: {args.a}, B: {args.b})") from err
    except (OSError, SampleError, ImportError) as err:  # ImportError: pyarrow, for a directory
        PlainConsole(stderr=True).print(f"[red]error:[/] {escape(str(err))}", soft_wrap=True)
        return USAGE_ERROR
    print_comparison(comparison, console, show_claims=args.show_claims)
    if corrected is not None:
        print_corrected(corrected, console)
    if args.report:
        page = compare_report(comparison, str(args.a), str(args.b), corrected)
        args.report.write_text(page, "utf-8")
        console.print(f"report: {args.report}")
    verdict = comparison.verdict if corrected is None else corrected.verdict
    return GATE_FAILED if args.fail_if_worse and verdict == "worse" else OK


def print_corrected(d: CorrectedDifference, console: Console) -> None:
    """The difference corrected by people's labels, and what the labels held."""
    from rich.table import Table

    p = d.ppi
    table = Table(title=f"{d.metric}: B - A corrected by people's labels", title_justify="left")
    table.add_column("")
    table.add_column("value", justify="right")
    table.add_row("judge's mean difference B - A", f"{p.judge_mean:+.3f}")
    table.add_row(
        "corrected difference B - A",
        f"{p.estimate:+.3f}  [{p.low:+.3f}, {p.high:+.3f}] {p.confidence:.0%} interval",
    )
    table.add_row("labels alone", f"[{p.labels_only[0]:+.3f}, {p.labels_only[1]:+.3f}]")
    table.add_row("tasks labelled on both sides / paired", f"{p.labels} / {p.total}")
    table.add_row("judge's bias on B minus on A", f"{p.judge_bias:+.3f}")
    table.add_row("method", p.method)
    if d.one_side:
        table.add_row("labelled on one side only (not used)", str(d.one_side))
    if d.unmatched:
        table.add_row("labels matching no paired answer (not used)", str(d.unmatched))
    if d.unscorable:
        table.add_row("labelled, not scored by both runs (not used)", str(d.unscorable))
    if d.other_labels:
        table.add_row("labels of single claims (for calibrate)", str(d.other_labels))
    console.print(table)
    colour = {"better": "green", "worse": "red"}.get(d.verdict, "yellow")
    if d.one_side:
        console.print(
            f"[yellow]note[/]: {d.one_side} tasks are labelled for one run only: the two "
            "reviews drew different tasks. The correction assumes the tasks labelled on both "
            "sides are a random sample of the pairs; review both runs with the same --answers "
            "and --seed",
            soft_wrap=True,
        )
    console.print(
        f"corrected verdict: [bold {colour}]{d.verdict}[/] (the interval "
        f"{'excludes' if d.verdict != 'no significant difference' else 'includes'} 0)"
    )


def print_comparison(c: Comparison, console: Console, show_claims: int = 10) -> None:
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=f"{c.metric}: B vs A", title_justify="left")
    table.add_column("")
    table.add_column("value", justify="right")
    table.add_row("samples A / B / paired", f"{c.n_a} / {c.n_b} / {c.n_shared}")
    if c.only_a or c.only_b:
        table.add_row("only in A / only in B", f"{c.only_a} / {c.only_b}")
    if c.claim_sets_differ:
        table.add_row("paired, other claims (not diffed)", str(c.claim_sets_differ))
    table.add_row("both scored", str(len(c.pairs)))
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
        if c.effect_size is not None:
            same = " (every difference the same)" if math.isinf(c.effect_size) else ""
            table.add_row("effect size (paired d)", f"{c.effect_size:+.2f}{same}")
        table.add_row("smallest detectable difference", _mdd(c.mdd))
    console.print(table)
    colour = {"better": "green", "worse": "red"}.get(c.verdict, "yellow")
    console.print(f"verdict: [bold {colour}]{c.verdict}[/] (alpha {c.alpha}){_meaning(c)}")
    for change in c.changes[:show_claims]:
        console.print(f"[bold]{escape(change.question or change.key)}[/]")
        for claim in change.recovered:
            console.print(f"  [green]+ recovered[/] {escape(claim)}", highlight=False)
        for claim in change.lost:
            console.print(f"  [red]- lost[/] {escape(claim)}", highlight=False)
    if len(c.changes) > show_claims:
        console.print(f"... and {len(c.changes) - show_claims} more samples with changed claims")


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except OSError:
        return False


def _mdd(mdd: float | None) -> str:
    if mdd is None or mdd == float("inf"):
        return "none: too few pairs"
    return f"±{mdd:.3f} (80% power)"


def _meaning(c: Comparison) -> str:
    """What a verdict without a difference means, in words."""
    if c.identical:
        return (
            f": A and B hold identical results for all {c.n_shared} samples: the same run "
            "twice, or a deterministic judge on the same retrievals; there is no difference "
            "to test"
        )
    if c.verdict == "too few pairs":
        changed = sum(p.diff != 0 for p in c.pairs)
        return (
            f": with {len(c.pairs)} pairs ({changed} that differ) no difference could reach "
            f"alpha {c.alpha}; score more questions"
        )
    if c.verdict == "no significant difference" and c.mdd is not None and math.isfinite(c.mdd):
        return f": a true difference smaller than ±{c.mdd:.3f} would likely go unseen"
    return ""


def _counts(diffs: Sequence[float]) -> tuple[int, int, int]:
    return (sum(d > 0 for d in diffs), sum(d < 0 for d in diffs), sum(d == 0 for d in diffs))
