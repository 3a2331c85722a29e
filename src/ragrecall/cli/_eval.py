"""``ragrecall eval DATA``: score a dataset, save every sample as it finishes, gate in CI.

Exit codes: 0 passed; 1 a gate failed (mean of the first metric below ``--fail-under``, or
too many unscorable samples); 2 bad usage or data; 3 stopped at ``--max-calls`` /
``--max-tokens`` (what finished is saved; run again with a larger budget to go on); 4 the
judge could not start; 5 an internal error; 130 interrupted (Ctrl-C), 143 terminated
(SIGTERM): what finished is saved.

A sample is identified by its ``sample_id`` (or ``--id-column``), else by its question and
reference: the same task whichever retriever answered it. With ``--out``, each finished sample
is appended to the JSONL file at once (fsync'd); running the same command again skips the
samples already there unchanged and scores a changed row again. Without ``--out`` the results
live in memory only.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .._calibration import CalibrationProfile
from .._claim_sets import read_claim_sets, with_claim_sets
from .._data import SampleId
from .._errors import JudgeModelError, SampleError
from .._html import eval_report
from .._judge.resolve import JudgeLike
from .._metrics.base import MetricOptions
from .._metrics.estimate import estimate_cost, known_price, recall_plan, run_estimator
from .._metrics.registry import build_metrics, metric_names
from .._results_file import Record, ResultsFile, read_records
from .._run import Budget, identities, pending, score_samples
from .._schemas import Sample
from .._summary import RunSummary
from ..prompts import PROMPT_VERSION
from ._eval_batch import BATCHES_RUNNING, batched, open_batch
from ._eval_ray import add_ray_arguments, run_ray
from ._exit import (
    BUDGET_STOPPED,
    GATE_FAILED,
    JUDGE_UNAVAILABLE,
    OK,
    USAGE_ERROR,
    interrupted,
    judge_failure,
    output_failed,
)
from ._inputs import (
    CLAIM_MODES,
    add_input_command,
    check_writable,
    claim_cache,
    claim_mode,
    judge_spec,
)
from ._text import PlainConsole
from ._traces import add_traces_arguments, finish_traces, read_samples

__all__ = ["add_eval_command", "run_eval"]


def add_eval_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = add_input_command(
        commands, "eval", "score a dataset (JSONL/CSV/Parquet file or a directory of them)", __doc__
    )
    p.add_argument(
        "--metric",
        action="append",
        choices=metric_names(),
        metavar="NAME",
        help="metric to score (repeatable; default context_recall): " + ", ".join(metric_names()),
    )
    p.add_argument(
        "--claims",
        default=None,
        metavar="FILE",
        help="score against exactly these claim sets (a file from `ragrecall claims`)",
    )
    p.add_argument(
        "--strategy",
        choices=("auto", "per_claim", "batched"),
        default="auto",
        help="attribution strategy of context/response recall (auto)",
    )
    p.add_argument(
        "--calibration",
        type=Path,
        default=None,
        metavar="PROFILE",
        help="decide context/response recall's verdicts with this profile (from `ragrecall "
        "calibrate`); refused (exit 2) when it was fitted for another judge or prompt version",
    )
    p.add_argument("--concurrency", type=int, default=None, help="samples scored at once")
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        help="append each finished sample to this JSONL file, and resume from it "
        "(default: keep results in memory only)",
    )
    p.add_argument("--report", type=Path, default=None, help="write an HTML report here")
    p.add_argument(
        "--fail-under",
        type=float,
        default=None,
        metavar="SCORE",
        help="exit 1 when the first metric's mean is below this",
    )
    p.add_argument("--threshold", type=float, default=None, help=argparse.SUPPRESS)
    p.add_argument(
        "--max-unscorable",
        type=float,
        default=0.05,
        help="exit 1 when a metric's unscorable share exceeds this (0.05)",
    )
    p.add_argument(
        "--repeats",
        type=int,
        default=1,
        help="judge each sample N times and report the spread (claims are cached, "
        "so repeats re-judge attribution only)",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="print the estimated judge calls, tokens and price; call no judge",
    )
    p.add_argument("--price-in", type=float, default=None, help="USD per million input tokens")
    p.add_argument("--price-out", type=float, default=None, help="USD per million output tokens")
    p.add_argument(
        "--max-calls",
        type=int,
        default=None,
        help="stop submitting samples once this many judge calls are spent (exit 3)",
    )
    p.add_argument(
        "--max-tokens",
        type=int,
        default=None,
        help="stop submitting samples once this many tokens are spent (exit 3)",
    )
    p.add_argument(
        "--show-worst",
        type=int,
        default=5,
        metavar="N",
        help="lowest-scoring samples to print with their missing claims (5)",
    )
    p.add_argument("--timeout", type=float, default=None, help="seconds per judge call")
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress bar (default: when stderr is a terminal)",
    )
    add_traces_arguments(p)
    add_ray_arguments(p)
    p.set_defaults(func=run_eval)


def run_eval(args: argparse.Namespace, console: Console | None = None) -> int:
    """The ``eval`` command; returns the exit code."""
    console = console or PlainConsole()
    err_console = PlainConsole(stderr=True)
    if args.threshold is not None:
        err_console.print("warning: --threshold is deprecated; use --fail-under")
        args.fail_under = args.fail_under if args.fail_under is not None else args.threshold
    if args.claims in CLAIM_MODES:
        err_console.print(f"warning: --claims {args.claims} is deprecated; use --claim-mode")
        args.claim_mode, args.claims = args.claims, None
    store: ResultsFile | None = None
    try:
        _check_args(args)
        names: list[str] = list(dict.fromkeys(args.metric or ["context_recall"]))
        samples, traced = read_samples(args, err_console)
        if args.claims:
            samples = with_claim_sets(samples, read_claim_sets(Path(args.claims)), args.claims)
        judge = judge_spec(args)
        options = MetricOptions(
            claims=claim_mode(args),
            strategy=args.strategy,
            timeout=args.timeout,
            claim_cache=claim_cache(args),
            calibration=CalibrationProfile.load(args.calibration) if args.calibration else None,
        )
        if args.dry_run:
            return _dry_run(args, samples, names, judge, options, console)
        if getattr(args, "engine", "local") == "ray":
            if args.traces_out:
                raise SampleError("--traces-out is not supported with --engine ray")
            ray_options = replace(options, claim_cache=None)
            return run_ray(args, samples, names, ray_options, console, err_console, _finish)
        batch = open_batch(args, judge) if getattr(args, "engine", "local") == "batch" else None
        if batch is not None:  # one attribution request a sample: two rounds of batches
            judge = batch.chat
            options = replace(options, strategy=batched(options.strategy))
        if args.out:
            store = ResultsFile.open(args.out, metrics=names, repeats=args.repeats)
        metrics = build_metrics(names, judge, options)
        if options.calibration is not None:  # refuse another judge's profile before scoring
            options.calibration.check(metrics[0].judge_id(), PROMPT_VERSION)
    except (OSError, ValueError, TypeError, ImportError) as err:  # SampleError is a ValueError
        return _usage_error(err_console, str(err), store)
    summary = RunSummary(names, args.show_worst)
    idents = identities(samples)
    current = dict(idents)
    todo = pending(idents, store.done) if store is not None else []
    if store is not None:
        for record in _current(args.out, current):  # resumed samples count in the summary too
            summary.add(record)
        if store.repaired:
            err_console.print(f"{args.out}: cut away a torn last line (an interrupted write)")
        if summary.count:
            err_console.print(
                f"resuming: {summary.count} samples already in {args.out}, {len(todo)} to go"
            )
    # Records are kept in memory only for an HTML report or --traces-out with no results file
    # to read back.
    kept: list[Record] | None = [] if (args.report or args.traces_out) and store is None else None
    budgeted = args.max_calls is not None or args.max_tokens is not None
    budget = Budget(
        args.max_calls, args.max_tokens, run_estimator(metrics, args.repeats) if budgeted else None
    )

    scored = 0  # samples this run finished: after one, a judge failure is not "cannot start"

    def collect(record: Record) -> None:
        nonlocal scored
        scored += 1
        summary.add(record)
        if kept is not None:
            kept.append(record)

    start = time.perf_counter()
    stopped: tuple[int, str] | None = None
    try:
        if batch is not None:
            assert store is not None  # open_batch asked for --out
            batch.score(
                samples,
                metrics,
                ids=idents,
                store=store,
                budget=budget,
                on_record=collect,
                poll_interval=args.poll,
                notify=err_console.print,
            )
        else:
            asyncio.run(
                score_samples(
                    samples,
                    metrics,
                    ids=idents,
                    store=store,
                    budget=budget,
                    on_record=collect,
                    concurrency=args.concurrency,
                    timeout=args.timeout,
                    repeats=args.repeats,
                    show_progress=args.progress,
                )
            )
    except KeyboardInterrupt:
        code, word = interrupted()
        stopped = code, f"[yellow]{word}[/]" + (BATCHES_RUNNING if batch is not None else "")
    except JudgeModelError as err:
        stopped = JUDGE_UNAVAILABLE, f"[red]error:[/] {escape(judge_failure(err, scored))}"
    finally:
        if store is not None:
            store.close()
    if stopped is not None:
        code, message = stopped
        saved = (
            f"{summary.count} samples are in {args.out}, run again to resume" if args.out else ""
        )
        err_console.print(f"{message}; {saved or 'nothing was saved (no --out)'}")
        return code
    elapsed = time.perf_counter() - start
    wanted = args.report or args.traces_out
    records = kept if kept is not None else _current(args.out, current) if wanted else []
    if traced is not None:
        finish_traces(traced, records, idents, args, console)
    return _finish(summary, records, budget, elapsed, len(samples), args, console)


def _current(path: Path, current: dict[SampleId, str]) -> list[Record]:
    """The records of ``path`` for this input's samples as they are now (not those of rows
    since removed or changed)."""
    return [r for r in read_records(path) if current.get(r.id) == r.content]


def _usage_error(err_console: Console, message: str, store: ResultsFile | None) -> int:
    if store is not None:
        store.close()
    err_console.print(f"[red]error:[/] {escape(message)}", soft_wrap=True)
    return USAGE_ERROR


def _check_args(args: argparse.Namespace) -> None:
    checks = [
        (args.repeats < 1, "--repeats must be at least 1"),
        (args.concurrency is not None and args.concurrency < 1, "--concurrency must be >= 1"),
        (not 0 <= args.max_unscorable <= 1, "--max-unscorable must be in [0, 1]"),
        (
            args.fail_under is not None and not 0 <= args.fail_under <= 1,
            "--fail-under must be in [0, 1]",
        ),
    ]
    for failed, message in checks:
        if failed:
            raise SampleError(message)
    out = args.out if getattr(args, "engine", "local") != "ray" else None  # ray: a directory
    outputs = ((out, "--out"), (args.report, "--report"), (args.traces_out, "--traces-out"))
    for path, flag in outputs:
        if path is not None:
            check_writable(path, flag)


# --- Output -------------------------------------------------------------------------------


def _dry_run(
    args: argparse.Namespace,
    samples: Sequence[Sample],
    names: Sequence[str],
    judge: JudgeLike,
    options: MetricOptions,
    console: Console,
) -> int:
    plan = recall_plan(judge, options)
    done = (
        {r.id: r.content for r in read_records(args.out)} if args.out and args.out.exists() else {}
    )
    todo = [samples[i] for i in pending(identities(samples), done)]
    est = estimate_cost(todo, names, claims=options.claims, repeats=args.repeats, **asdict(plan))
    table = Table(title="dry run: estimated judge work (no judge called)", title_justify="left")
    table.add_column("")
    table.add_column("estimate", justify="right")
    qualifier = "" if est.exact else "~"
    table.add_row("samples", str(est.samples))
    table.add_row("metrics", ", ".join(names))
    table.add_row(
        "strategy / evidence / verdict", f"{plan.strategy} / {plan.evidence} / {plan.verdict}"
    )
    table.add_row("judge calls", f"{qualifier}{est.calls}")
    table.add_row("prompt tokens", f"~{est.prompt_tokens}")
    table.add_row("completion tokens", f"~{est.completion_tokens}")
    price = known_price(args.judge) or (0.0, 0.0)
    price_in = args.price_in if args.price_in is not None else price[0]
    price_out = args.price_out if args.price_out is not None else price[1]
    if price_in or price_out:
        cost = est.price(price_in, price_out)
        table.add_row("price (USD)", f"~{cost:.4f} at {price_in}/{price_out} per M tokens")
    console.print(table)
    console.print(
        "calls are "
        + ("exact for valid judge replies (re-asks not counted)" if est.exact else "an estimate")
    )
    for note in sorted(est.notes):
        console.print(f"  note: {note}")
    return OK


def _finish(
    summary: RunSummary,
    records: list[Record],
    budget: Budget,
    elapsed: float,
    total_samples: int,
    args: argparse.Namespace,
    console: Console,
) -> int:
    console.print(summary.table(total_samples, args.repeats))
    summary.print_worst(console)
    if args.repeats > 1:
        summary.print_spread(console)
    u = budget.usage
    console.print(
        f"this run: judge calls {u.calls} ({u.retries} retries), prompt tokens {u.prompt_tokens} "
        f"({u.cached_tokens} cached), completion tokens {u.completion_tokens}, "
        f"{elapsed:.1f} s"
    )
    if args.out:
        console.print(f"results: {args.out}")
    unwritten: int | None = None
    if args.report:
        try:
            page = eval_report(records, summary.names, title=str(args.data))
            args.report.write_text(page, "utf-8")
            console.print(f"report: {args.report}")
        except OSError as err:
            kept = None if args.out else records
            what = f"the report {args.report}"
            unwritten = output_failed(err, what, kept, PlainConsole(stderr=True))
    failures = []
    first = summary.metrics[0]
    mean = first.mean
    if args.fail_under is not None and (mean is None or mean < args.fail_under):
        shown = "n/a" if mean is None else f"{mean:.3f}"
        failures.append(f"{first.name} mean {shown} is below --fail-under {args.fail_under}")
    for s in summary.metrics:
        if s.unscorable_share > args.max_unscorable:
            failures.append(
                f"{s.name}: {s.unscorable_share:.1%} unscorable exceeds "
                f"--max-unscorable {args.max_unscorable:.1%}"
            )
    if budget.spent:
        over = budget.over()
        console.print(
            f"[yellow]stopped at the budget[/] (--max-calls {args.max_calls}, "
            f"--max-tokens {args.max_tokens}): {summary.count} of {total_samples} "
            "samples done; a sample starts only if its estimated calls fit"
            + (f"; {over} over: samples in flight spent more than estimated" if over else "")
            + (f"; run again to resume from {args.out}" if args.out else "")
        )
        return BUDGET_STOPPED
    for failure in failures:
        console.print(f"[red]FAIL[/] {escape(failure)}")
    if not failures:
        console.print("[green]PASS[/]")
    if unwritten is not None:
        return unwritten
    return GATE_FAILED if failures else OK
