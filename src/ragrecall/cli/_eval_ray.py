"""``ragrecall eval DATA --engine ray``: the same run on a Ray cluster, with the same gates,
budgets and exit codes; ``--out`` is a directory of Parquet parts (resumed as a file is)."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape

from .._errors import JudgeModelError
from .._extras import requires
from .._metrics.base import MetricOptions
from .._run import Budget
from .._schemas import Sample, Usage
from ._exit import JUDGE_UNAVAILABLE, USAGE_ERROR, interrupted

__all__ = ["add_ray_arguments", "run_ray"]


def add_ray_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--engine",
        choices=("local", "ray", "batch"),
        default="local",
        help="where to score: this process (local), a Ray cluster (ray; pip install "
        "'ragrecall[ray]'; --out is then a directory of Parquet parts), or the judge "
        "provider's Batch API (batch: half price, within a day; needs --out)",
    )
    p.add_argument(
        "--poll",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="with --engine batch: seconds between batch status checks (30)",
    )
    p.add_argument(
        "--address", default=None, help="with --engine ray: the cluster (default: start one)"
    )
    p.add_argument("--workers", type=int, default=2, help="with --engine ray: scoring actors (2)")
    p.add_argument(
        "--worker-cpus", type=float, default=1.0, help="with --engine ray: CPUs per worker (1)"
    )
    p.add_argument(
        "--rpm", type=float, default=None, help="with --engine ray: judge requests per minute"
    )
    p.add_argument(
        "--tpm", type=float, default=None, help="with --engine ray: judge tokens per minute"
    )


def run_ray(
    args: argparse.Namespace,
    samples: Sequence[Sample],
    names: Sequence[str],
    options: MetricOptions,
    console: Console,
    err_console: Console,
    finish: Callable[..., int],
) -> int:
    """Score ``samples`` on Ray and ``finish`` as the local engine does (``_eval._finish``:
    the summary, the report, the gates and the exit code)."""
    try:
        with requires("--engine ray"):
            import ray

            import ragrecall.ray as rr
    except ImportError as err:
        err_console.print(f"[red]error:[/] {escape(str(err))}")
        return USAGE_ERROR
    if args.workers < 1:
        err_console.print("[red]error:[/] --workers must be at least 1")
        return USAGE_ERROR
    if not ray.is_initialized():
        ray.init(address=args.address)
    specs = [
        rr.MetricSpec(name, _judge(args), named=options, claims_store=args.claims_store)
        for name in names
    ]
    start = time.perf_counter()
    try:
        run = rr.run(
            list(samples),
            specs,
            out=args.out,
            workers=args.workers,
            concurrency_per_worker=args.concurrency or 8,
            num_cpus=args.worker_cpus,
            rpm=args.rpm,
            tpm=args.tpm,
            max_calls=args.max_calls,
            max_tokens=args.max_tokens,
            repeats=args.repeats,
            timeout=args.timeout,
        )
        if run.resumed:
            err_console.print(
                f"resuming: {run.resumed} samples already in {args.out}, {run.todo} to go"
            )
        summary = rr.summarize(run.results, names, args.show_worst)
        records = list(rr.iter_records(run.results, names)) if args.report else []
        state = run.state()
    except KeyboardInterrupt:
        code, word = interrupted()
        saved = f"what finished is in {args.out}, run again to resume" if args.out else ""
        err_console.print(f"[yellow]{word}[/]; {saved or 'nothing was saved (no --out)'}")
        return code
    except JudgeModelError as err:
        err_console.print(f"[red]error:[/] the judge could not start: {escape(str(err))}")
        return JUDGE_UNAVAILABLE
    budget = Budget(
        args.max_calls,
        args.max_tokens,
        usage=Usage(calls=state["calls"], prompt_tokens=state["tokens"]),
        spent=state["spent"],
    )
    elapsed = time.perf_counter() - start
    return finish(summary, records, budget, elapsed, len(samples), args, console)


def _judge(args: argparse.Namespace) -> Any:
    """The judge as it travels to the workers (a string or a picklable factory)."""
    import ragrecall.ray as rr

    if args.judge_factory:
        return rr.factory(args.judge_factory)
    if args.judge_url:
        model = (args.judge or "").partition(":")[2] or args.judge
        return rr.server(args.judge_url, model, args.judge_key_env)
    return args.judge
