"""``ragrecall eval DATA``: score a dataset, save every sample as it finishes, gate in CI.

Exit codes: 0 passed; 1 a gate failed (mean of the first metric below ``--threshold``, or
too many unscorable samples); 2 bad usage or data; 3 stopped at ``--max-calls`` /
``--max-tokens`` (what finished is saved; run again with a larger budget to go on);
130 interrupted (Ctrl-C; what finished is saved).

With ``--out``, each finished sample is appended to the JSONL file at once (fsync'd);
running the same command again skips the samples already there (by ``Sample.key()``).
Without ``--out`` the results live in memory only.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import statistics
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from pydantic import Field
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .._data import iter_rows, iter_samples
from .._errors import SampleError
from .._evaluate import astream
from .._judge.drive import Policy
from .._judge.resolve import DEFAULT_CONTEXT_WINDOW, JudgeLike, context_window, resolve_judge
from .._metrics.base import Metric
from .._metrics.estimate import Estimate, estimate_cost, known_price
from .._progress import progress
from .._results_file import Record, ResultsFile, read_records
from .._schemas import RecallResult, Sample, Usage
from .._summary import RunSummary

__all__ = [
    "METRICS",
    "Estimate",
    "RepeatedResult",
    "add_eval_command",
    "build_metrics",
    "estimate_cost",
    "load_judge",
    "parse_column_map",
    "repeated",
    "run_eval",
]

# Exit codes.
OK, GATE_FAILED, USAGE_ERROR, BUDGET_STOPPED, INTERRUPTED = 0, 1, 2, 3, 130

SUFFIXES = (".jsonl", ".json", ".csv", ".parquet")

METRICS = (
    "context_recall",
    "response_recall",
    "chunk_recall",
    "question_recall",
    "context_precision",
    "recall_precision",
    "retrieval_recall",
)


def add_eval_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = commands.add_parser(
        "eval",
        help="score a dataset (JSONL/CSV/Parquet file or a directory of them)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("data", type=Path, help="a .jsonl/.json/.csv/.parquet file or a directory")
    p.add_argument(
        "--metric",
        action="append",
        choices=METRICS,
        metavar="NAME",
        help="metric to score (repeatable; default context_recall): " + ", ".join(METRICS),
    )
    p.add_argument(
        "--judge", default=None, help="'local' (embedded judge, the default) or 'provider:model'"
    )
    p.add_argument(
        "--judge-factory",
        metavar="MODULE:CALLABLE",
        help="import MODULE and call CALLABLE() for the judge chat model (custom "
        "clients, test fakes); overrides --judge",
    )
    p.add_argument(
        "--claims",
        choices=("atomic", "sentences"),
        default="atomic",
        help="how the reference is split into claims (atomic: by the judge)",
    )
    p.add_argument(
        "--strategy",
        choices=("auto", "per_claim", "batched"),
        default="auto",
        help="attribution strategy of context/response recall (auto)",
    )
    p.add_argument(
        "--column-map",
        default=None,
        metavar="A=B,C=D",
        help="rename your columns to ours: 'gold=reference,ctx=retrieved_contexts' "
        "or a JSON object",
    )
    p.add_argument("--concurrency", type=int, default=None, help="samples scored at once")
    p.add_argument("--limit", type=int, default=None, help="score only the first N rows")
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        help="append each finished sample to this JSONL file, and resume from it "
        "(default: keep results in memory only)",
    )
    p.add_argument("--report", type=Path, default=None, help="write an HTML report here")
    p.add_argument(
        "--threshold",
        type=float,
        default=None,
        help="exit 1 when the first metric's mean is below this",
    )
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
    p.set_defaults(func=run_eval)


# --- Inputs -------------------------------------------------------------------------------


def parse_column_map(text: str | None) -> dict[str, str] | None:
    """``"a=b,c=d"`` or a JSON object -> ``{"a": "b", "c": "d"}`` (your column -> our field)."""
    if not text:
        return None
    if text.lstrip().startswith("{"):
        try:
            value = json.loads(text)
        except json.JSONDecodeError as err:
            raise SampleError(f"--column-map: invalid JSON: {err}") from err
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise SampleError("--column-map: expected a JSON object of strings")
        return {str(k): v for k, v in value.items()}
    mapping: dict[str, str] = {}
    for pair in text.split(","):
        source, sep, target = pair.partition("=")
        if not sep or not source.strip() or not target.strip():
            raise SampleError(f"--column-map: expected 'column=field' pairs, got {pair!r}")
        mapping[source.strip()] = target.strip()
    return mapping


class DataRows:
    """The rows of one file or of every supported file in a directory (sorted by name), up
    to ``limit``; re-iterable, so the data is validated first and then read lazily."""

    def __init__(self, path: Path, limit: int | None = None):
        if path.is_dir():
            self.files = sorted(p for p in path.iterdir() if p.suffix.lower() in SUFFIXES)
            if not self.files:
                raise SampleError(f"{path}: no {', '.join(SUFFIXES)} files in this directory")
        elif path.exists():
            self.files = [path]
        else:
            raise SampleError(f"{path}: no such file or directory")
        self.limit = limit
        self.sizes: list[int] = []

    def __iter__(self) -> Iterator[Any]:
        count = 0
        sizes: list[int] = []
        self.sizes = sizes
        for file in self.files:
            sizes.append(0)
            for row in iter_rows(file):
                if self.limit is not None and count >= self.limit:
                    return
                sizes[-1] += 1
                count += 1
                yield row

    def locate(self, index: int) -> str:
        """``file, row n`` for a global row index (after one full pass)."""
        for file, size in zip(self.files, self.sizes, strict=False):
            if index < size:
                return f"{file.name}, row {index}"
            index -= size
        return f"row {index}"


# --- Judge and metrics --------------------------------------------------------------------


def load_judge(spec: str | None, factory: str | None) -> JudgeLike:
    """The judge: ``factory`` ("module:callable") is imported and called; otherwise the spec
    string (None or "local": the embedded judge) is returned for the metrics to resolve."""
    if not factory:
        return spec
    module_name, _, attr = factory.partition(":")
    if not module_name or not attr:
        raise SampleError(f"--judge-factory: expected MODULE:CALLABLE, got {factory!r}")
    try:
        target = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as err:
        raise SampleError(f"--judge-factory {factory!r}: {err}") from err
    judge = target()
    if not isinstance(judge, BaseChatModel):
        raise SampleError(
            f"--judge-factory {factory!r} returned {type(judge).__name__}, "
            "not a LangChain chat model"
        )
    return judge


def build_metrics(
    names: Sequence[str],
    judge: JudgeLike,
    *,
    claims: str = "atomic",
    strategy: str = "auto",
    timeout: float | None = None,
) -> list[Metric]:
    """Metric objects by name, sharing one judge (resolved once)."""
    from .._metrics.chunk_recall import ChunkRecall
    from .._metrics.context_recall import ContextRecall
    from .._metrics.precision import ContextPrecision, RecallPrecision
    from .._metrics.question_recall import QuestionRecall
    from .._metrics.response_recall import ResponseRecall
    from .._metrics.retrieval_recall import RetrievalRecall

    extra: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
    shared: JudgeLike = judge
    if any(n != "retrieval_recall" for n in names):
        shared = resolve_judge(judge)
    metrics: list[Metric] = []
    for name in names:
        metric: Metric
        if name in ("context_recall", "response_recall"):
            cls = ContextRecall if name == "context_recall" else ResponseRecall
            metric = cls(shared, claims, strategy=strategy, **extra)  # type: ignore[arg-type]
        elif name == "recall_precision":
            auto = strategy if strategy == "batched" else "auto"
            metric = RecallPrecision(shared, claims, strategy=auto, **extra)  # type: ignore[arg-type]
        elif name == "chunk_recall":
            metric = ChunkRecall(shared, **extra)
        elif name == "context_precision":
            metric = ContextPrecision(shared, **extra)
        elif name == "question_recall":
            metric = QuestionRecall(shared, **extra)
        elif name == "retrieval_recall":
            metric = RetrievalRecall()
        else:
            raise SampleError(f"unknown metric {name!r}; choose from {', '.join(METRICS)}")
        metrics.append(metric)
    return metrics


class RepeatedResult(RecallResult):
    """A result judged several times: ``score`` is the mean of the scored runs; claims,
    verdicts and missing come from the first scored run; usage is summed."""

    runs: list[float | None] = Field(default_factory=list)


class _Repeated(Metric):
    """Scores with ``inner`` ``repeats`` times, one run after another."""

    def __init__(self, inner: Metric, repeats: int):
        super().__init__(None)
        self.inner = inner
        self.repeats = repeats
        self.policy = inner.policy

    @property
    def judge(self) -> BaseChatModel:
        return self.inner.judge

    def score(self, sample: Sample | Mapping[str, Any]) -> RecallResult:
        return combine_runs([self.inner.score(sample) for _ in range(self.repeats)])

    async def ascore(
        self, sample: Sample | Mapping[str, Any], policy: Policy | None = None
    ) -> RecallResult:
        return combine_runs([await self.inner.ascore(sample, policy) for _ in range(self.repeats)])

    def _steps(self, sample: Sample, usage: Usage) -> Any:
        raise NotImplementedError  # score and ascore are overridden


def repeated(metric: Metric, repeats: int) -> Metric:
    """``metric`` judged ``repeats`` times per sample (same name); itself when repeats is 1."""
    if repeats == 1:
        return metric
    cls = type(
        f"Repeated{type(metric).__name__}",
        (_Repeated,),
        {"name": metric.name, "uses_judge": metric.uses_judge},
    )
    wrapped: Metric = cls(metric, repeats)
    return wrapped


def combine_runs(results: Sequence[RecallResult]) -> RepeatedResult:
    runs = [r.score for r in results]
    scored = [s for s in runs if s is not None]
    first = next((r for r in results if r.score is not None), results[0])
    usage = sum((r.usage for r in results), Usage())
    fields = first.model_dump(include=set(RecallResult.model_fields))
    fields.update(
        score=statistics.fmean(scored) if scored else None,
        status="scored" if scored else "unscorable",
        usage=usage,
        elapsed_s=sum(r.elapsed_s for r in results),
        runs=runs,
    )
    return RepeatedResult.model_validate(fields)


# --- The run ------------------------------------------------------------------------------


@dataclass
class Budget:
    max_calls: int | None = None
    max_tokens: int | None = None
    usage: Usage = field(default_factory=Usage)
    spent: bool = False

    def add(self, usage: Usage) -> None:
        self.usage = self.usage + usage
        tokens = self.usage.prompt_tokens + self.usage.completion_tokens
        if (self.max_calls is not None and self.usage.calls >= self.max_calls) or (
            self.max_tokens is not None and tokens >= self.max_tokens
        ):
            self.spent = True


def run_eval(args: argparse.Namespace, console: Console | None = None) -> int:
    """The ``eval`` command; returns the exit code."""
    console = console or Console()
    err_console = Console(stderr=True)
    rows: DataRows | None = None
    try:
        _check_args(args)
        column_map = parse_column_map(args.column_map)
        names: list[str] = list(dict.fromkeys(args.metric or ["context_recall"]))
        rows = DataRows(args.data, args.limit)
        samples_keys = [s.key() for s in iter_samples(rows, column_map)]
        judge_spec = load_judge(args.judge, args.judge_factory)
        if args.dry_run:
            return _dry_run(args, rows, column_map, names, judge_spec, console)
        summary = RunSummary(names, args.show_worst)  # resumed records count too
        store = (
            ResultsFile.open(args.out, metrics=names, repeats=args.repeats, on_record=summary.add)
            if args.out
            else None
        )
    except SampleError as err:
        message = str(err)
        if rows is not None and len(rows.files) > 1 and isinstance(err.row, int):
            message += f" ({rows.locate(err.row)})"
        err_console.print(f"[red]error:[/] {escape(message)}", soft_wrap=True)
        return USAGE_ERROR
    except (OSError, ValueError, TypeError) as err:  # TypeError: a malformed row value
        err_console.print(f"[red]error:[/] {escape(str(err))}", soft_wrap=True)
        return USAGE_ERROR
    try:
        metrics = [
            repeated(m, args.repeats)
            for m in build_metrics(
                names, judge_spec, claims=args.claims, strategy=args.strategy, timeout=args.timeout
            )
        ]
    except (ValueError, ImportError) as err:
        err_console.print(f"[red]error:[/] {escape(str(err))}", soft_wrap=True)
        if store is not None:
            store.close()
        return USAGE_ERROR
    # Records are kept in memory only for an HTML report with no results file to read back.
    kept: list[Record] | None = [] if args.report and store is None else None
    done = set(store.done) if store is not None else set()
    todo = len({k for k in samples_keys if k not in done})
    if store is not None and store.repaired:
        err_console.print(f"{args.out}: cut away a torn last line (an interrupted write)")
    if done:
        err_console.print(f"resuming: {len(done)} samples already in {args.out}, {todo} to go")
    budget = Budget(args.max_calls, args.max_tokens)

    def collect(record: Record) -> None:
        summary.add(record)
        if kept is not None:
            kept.append(record)

    start = time.perf_counter()
    interrupted = False
    try:
        asyncio.run(_score(rows, column_map, metrics, store, done, budget, args, todo, collect))
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if store is not None:
            store.close()
    if interrupted:
        saved = f"; finished samples are in {args.out}, run again to resume" if args.out else ""
        err_console.print(f"[yellow]interrupted[/]{saved}")
        return INTERRUPTED
    elapsed = time.perf_counter() - start
    return _finish(summary, kept, budget, elapsed, len(set(samples_keys)), args, console)


def _check_args(args: argparse.Namespace) -> None:
    checks = [
        (args.repeats < 1, "--repeats must be at least 1"),
        (args.concurrency is not None and args.concurrency < 1, "--concurrency must be >= 1"),
        (args.limit is not None and args.limit < 0, "--limit must be >= 0"),
        (not 0 <= args.max_unscorable <= 1, "--max-unscorable must be in [0, 1]"),
        (
            args.threshold is not None and not 0 <= args.threshold <= 1,
            "--threshold must be in [0, 1]",
        ),
    ]
    for failed, message in checks:
        if failed:
            raise SampleError(message)


async def _score(
    rows: DataRows,
    column_map: Mapping[str, str] | None,
    metrics: Sequence[Metric],
    store: ResultsFile | None,
    done: set[str],
    budget: Budget,
    args: argparse.Namespace,
    todo: int,
    collect: Callable[[Record], None],
) -> None:
    """Score what is not done yet; append each sample as it finishes and hand it to
    ``collect``."""
    submitted: set[str] = set(done)

    def skip(sample: Sample) -> bool:
        key = sample.key()
        if budget.spent or key in submitted:  # done, a duplicate row, or out of budget
            return True
        submitted.add(key)
        return False

    stream = astream(
        rows,
        metrics,
        column_map=column_map,
        concurrency=args.concurrency,
        skip=skip,
        **({} if args.timeout is None else {"timeout": args.timeout}),
    )
    with progress(todo, args.progress) as advance:
        async for scored in stream:
            record = _record(scored.index, scored.sample, scored.results)
            if store is not None:
                store.append(record)
            collect(record)
            budget.add(sum((r.usage for r in scored.results.values()), Usage()))
            advance()


def _record(index: int, sample: Sample, results: Mapping[str, RecallResult]) -> Record:
    runs = {n: r.runs for n, r in results.items() if isinstance(r, RepeatedResult)}
    return Record(sample.key(), index, sample, dict(results), runs)


# --- Output -------------------------------------------------------------------------------


def _dry_run(
    args: argparse.Namespace,
    rows: DataRows,
    column_map: Mapping[str, str] | None,
    names: Sequence[str],
    judge: JudgeLike,
    console: Console,
) -> int:
    strategy, evidence, verdict, window = "batched", "quote", "json", DEFAULT_CONTEXT_WINDOW
    try:
        recall = build_metrics(
            ["context_recall"], judge, claims=args.claims, strategy=args.strategy
        )[0]
        strategy = recall.strategy  # type: ignore[attr-defined]
        evidence = recall.evidence  # type: ignore[attr-defined]
        verdict = recall.verdict  # type: ignore[attr-defined]
        window = context_window(recall.judge)
    except Exception:  # e.g. an API model without its key: assume a remote API
        if args.strategy != "auto":
            strategy = args.strategy
        evidence = "align" if strategy == "per_claim" else "quote"
    done: set[str] = set()
    if args.out is not None and args.out.exists():
        done = {r.key for r in read_records(args.out)}
    samples = [s for s in iter_samples(rows, column_map) if s.key() not in done]
    unique = list({s.key(): s for s in samples}.values())
    est = estimate_cost(
        unique,
        names,
        claims=args.claims,
        strategy=strategy,
        evidence=evidence,
        verdict=verdict,
        window_tokens=window,
        repeats=args.repeats,
    )
    table = Table(title="dry run: estimated judge work (no judge called)", title_justify="left")
    table.add_column("")
    table.add_column("estimate", justify="right")
    qualifier = "" if est.exact else "~"
    table.add_row("samples", str(est.samples))
    table.add_row("metrics", ", ".join(names))
    table.add_row("strategy / evidence / verdict", f"{strategy} / {evidence} / {verdict}")
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
    kept: list[Record] | None,
    budget: Budget,
    elapsed: float,
    total_samples: int,
    args: argparse.Namespace,
    console: Console,
) -> int:
    summary.print_worst(console)
    if args.repeats > 1:
        summary.print_spread(console)
    console.print(summary.table(total_samples, args.repeats))
    u = budget.usage
    console.print(
        f"this run: judge calls {u.calls}, prompt tokens {u.prompt_tokens} "
        f"({u.cached_tokens} cached), completion tokens {u.completion_tokens}, "
        f"{elapsed:.1f} s"
    )
    if args.out:
        console.print(f"results: {args.out}")
    if args.report:
        from .._html import eval_report

        records = kept if kept is not None else read_records(args.out)
        args.report.write_text(eval_report(records, summary.names, title=str(args.data)), "utf-8")
        console.print(f"report: {args.report}")
    failures = []
    first = summary.metrics[0]
    mean = first.mean
    if args.threshold is not None and (mean is None or mean < args.threshold):
        shown = "n/a" if mean is None else f"{mean:.3f}"
        failures.append(f"{first.name} mean {shown} is below the threshold {args.threshold}")
    for s in summary.metrics:
        if s.unscorable_share > args.max_unscorable:
            failures.append(
                f"{s.name}: {s.unscorable_share:.1%} unscorable exceeds "
                f"--max-unscorable {args.max_unscorable:.1%}"
            )
    if budget.spent:
        console.print(
            f"[yellow]stopped at the budget[/] (--max-calls {args.max_calls}, "
            f"--max-tokens {args.max_tokens}): {summary.count} of {total_samples} "
            "samples done; in-flight samples were finished and kept"
            + (f"; run again to resume from {args.out}" if args.out else "")
        )
        return BUDGET_STOPPED
    for failure in failures:
        console.print(f"[red]FAIL[/] {escape(failure)}")
    if not failures:
        console.print("[green]PASS[/]")
    return GATE_FAILED if failures else OK
