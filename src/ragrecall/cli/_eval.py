"""``ragrecall eval DATA``: score a dataset, save every sample as it finishes, gate in CI.

Exit codes: 0 passed; 1 a gate failed (mean of the first metric below ``--min-score``, or
too many unscorable samples); 2 bad usage or data; 3 stopped at ``--max-calls`` /
``--max-tokens`` (what finished is saved; run again with a larger budget to go on); 4 the
judge could not start, or failed every call; 5 an internal error; 6 an output could not be
written; 130 interrupted (Ctrl-C), 143 terminated (SIGTERM): what finished is saved.

A sample is identified by its ``sample_id`` (or ``--id-column``), else by its question and
reference: the same task whichever retriever answered it. With ``--out``, each finished sample
is appended to the JSONL file at once (fsync'd); running the same command again skips the
samples already there unchanged and scores a changed row again. Without ``--out`` the results
live in memory only.
"""

# The flags become the inputs of the run evaluate opens (Evaluation: the engine, the metrics
# as specs, the budget, --labels); the command calls it and summarizes what it hands back.

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from .._core.errors import JudgeModelError, SampleError
from .._metrics.registry import BUILT_IN_NAMES, metric_class
from ._engine import add_engine_arguments, build_engine, judge_recipe
from ._inputs import (
    CLAIM_MODES,
    add_input_command,
    check_writable,
    claim_cache,
    claim_mode,
    count,
    judge_spec,
    seconds,
)
from ._traces import add_traces_arguments, finish_traces, read_samples

if TYPE_CHECKING:
    from rich.console import Console

    from .._running.engines.base import Engine
    from .._running.store import Record

__all__ = ["add_eval_command", "run_eval"]


def add_eval_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = add_input_command(
        commands, "eval", "score a dataset (JSONL/CSV/Parquet file or a directory of them)", __doc__
    )
    p.add_argument(  # a name is checked when the command runs: another may be registered
        "--metric",
        action="append",
        metavar="NAME",
        help="metric to score (repeatable; default context_recall): "
        + ", ".join(BUILT_IN_NAMES)
        + ", or another registered metric's name",
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
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        help="append each finished sample to this JSONL file, and resume from it "
        "(default: keep results in memory only)",
    )
    p.add_argument("--report", type=Path, default=None, help="write an HTML report here")
    p.add_argument(
        "--summary-json",
        type=Path,
        default=None,
        metavar="FILE",
        help="write the run's summary as JSON here (means, intervals, counts; with --labels "
        "the corrected means)",
    )
    p.add_argument(
        "--labels",
        type=Path,
        action="append",
        default=None,
        metavar="LABELS",
        help="people's labels of whole answers (the export of `ragrecall review RESULTS "
        "--answers N`; repeatable): report the mean corrected by them, with its 90%% "
        "interval, and the judge's measured bias",
    )
    p.add_argument(
        "--min-score",
        type=float,
        default=None,
        metavar="SCORE",
        help="exit 1 when the first metric's mean is below this (with --labels: its "
        "corrected mean)",
    )
    for old in ("--fail-under", "--threshold"):  # deprecated names of --min-score
        p.add_argument(old, type=float, default=None, help=argparse.SUPPRESS)
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
        type=count,
        default=None,
        help="stop submitting samples once this many judge calls are spent (exit 3)",
    )
    p.add_argument(
        "--max-tokens",
        type=count,
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
    p.add_argument("--timeout", type=seconds, default=None, help="seconds per judge call")
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress bar (default: when stderr is a terminal)",
    )
    add_traces_arguments(p)
    add_engine_arguments(p)
    p.set_defaults(func=run_eval)


def run_eval(args: argparse.Namespace, console: Console | None = None) -> int:
    """The ``eval`` command; returns the exit code."""
    from .._analysis.summary import RunSummary
    from .._api import Evaluation
    from .._metrics.base import MetricOptions
    from .._metrics.claims.sets import read_claim_sets, with_claim_sets
    from .._metrics.decision import CalibrationProfile
    from .._metrics.prompts import PROMPT_VERSION
    from .._running.engines.base import RunSettings
    from .._running.spec import MetricSpec
    from ._dry_run import dry_run
    from ._exit import stopped
    from ._report import finish, judge_failed
    from ._text import PlainConsole

    console = console or PlainConsole()
    err_console = PlainConsole(stderr=True)
    for old in ("threshold", "fail_under"):
        if getattr(args, old) is not None:
            err_console.print(f"warning: --{old.replace('_', '-')} is deprecated; use --min-score")
            args.min_score = args.min_score if args.min_score is not None else getattr(args, old)
    if args.claims in CLAIM_MODES:
        err_console.print(f"warning: --claims {args.claims} is deprecated; use --claim-mode")
        args.claim_mode, args.claims = args.claims, None
    try:
        engine = build_engine(args)
        _check_args(args, engine)
        names: list[str] = list(dict.fromkeys(args.metric or ["context_recall"]))
        for name in names:  # built in, or registered by the time the command runs
            metric_class(name)
        samples, traced = read_samples(args, err_console)
        if args.claims:
            samples = with_claim_sets(samples, read_claim_sets(Path(args.claims)), args.claims)
        options = MetricOptions(
            claims=claim_mode(args),
            strategy=args.strategy,
            timeout=args.timeout,
            calibration=CalibrationProfile.load(args.calibration) if args.calibration else None,
        )
        cache = claim_cache(args)  # a store that cannot be opened: exit 2, now
        store = None if args.claims_store is None else str(args.claims_store)
        recipe = judge_recipe(args)
        metrics = [MetricSpec(n, recipe, named=options, claims_store=store) for n in names]
        settings = RunSettings(args.repeats, args.timeout, None, args.progress, err_console.print)
        run = Evaluation(  # the run evaluate() opens; bad labels are refused here
            samples,
            metrics,
            engine=engine,
            out=args.out,
            max_calls=args.max_calls,
            max_tokens=args.max_tokens,
            settings=settings,
            labels=args.labels,
            names=names,
        )
        if args.dry_run:
            named = replace(options, claim_cache=cache)
            return dry_run(args, samples, names, judge_spec(args), named, console)
        if options.calibration is not None:  # refuse another judge's profile before scoring
            options.calibration.check(metrics[0].build().judge_id(), PROMPT_VERSION)
    except (OSError, ValueError, TypeError, ImportError) as err:  # SampleError is a ValueError
        return _usage_error(err_console, str(err))
    summary = RunSummary(names, args.show_worst)
    kept: list[Record] | None = [] if args.report or args.traces_out else None
    scored = failed = 0  # samples finished; those whose every judge call failed

    def collect(record: Record) -> None:  # after one, a judge failure is not "cannot start"
        nonlocal scored, failed
        scored, failed = scored + 1, failed + judge_failed(record)
        summary.add(record)
        if kept is not None:
            kept.append(record)

    run.listen(collect)
    start = time.perf_counter()
    try:
        outcome = run.score()
    except (KeyboardInterrupt, JudgeModelError) as exc:
        code, message = stopped(exc, scored)
        saved = f"{summary.count} samples are in {args.out}, run again to resume"
        saved = saved if args.out else "nothing was saved (no --out)"
        err_console.print(f"{message}{engine.interrupted_note}; {saved}")
        return code
    except (ValueError, ImportError) as err:  # what the engine refused before scoring
        return _usage_error(err_console, str(err))
    elapsed = time.perf_counter() - start
    records = kept or []
    if traced is not None:
        finish_traces(traced, records, run.ids, args, console)
    try:
        corrected = list(run.corrected(outcome).values())
    except ValueError as err:  # an answer labelled against other claims
        return _usage_error(err_console, str(err))
    return finish(
        summary, records, run.budget, outcome.usage, elapsed, len(samples), args, console,
        corrected, failed,
    )  # fmt: skip


def _usage_error(err_console: Console, message: str) -> int:
    from rich.markup import escape

    from ._exit import USAGE_ERROR

    err_console.print(f"[red]error:[/] {escape(message)}", soft_wrap=True)
    return USAGE_ERROR


def _check_args(args: argparse.Namespace, engine: Engine) -> None:
    checks = [
        (args.repeats < 1, "--repeats must be at least 1"),
        (not 0 <= args.max_unscorable <= 1, "--max-unscorable must be in [0, 1]"),
        (
            args.min_score is not None and not 0 <= args.min_score <= 1,
            "--min-score must be in [0, 1]",
        ),
    ]
    for failed, message in checks:
        if failed:
            raise SampleError(message)
    out = args.out if engine.out_kind == "file" else None  # else a directory
    outputs = (
        (out, "--out"),
        (args.report, "--report"),
        (args.traces_out, "--traces-out"),
        (args.summary_json, "--summary-json"),
    )
    for path, flag in outputs:
        if path is not None:
            check_writable(path, flag)
