"""``ragrecall watch LOG...``: logged recall per time window, with its interval, and a drop
against a baseline flagged at a stated false-alarm rate for the whole log (exit 1 when one is
flagged, so a scheduled job can alert). The Python twin is ``ragrecall.sinks.watch``."""

from __future__ import annotations

import argparse
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from .._core.errors import SampleError

if TYPE_CHECKING:
    from rich.console import Console

    from .._analysis.watch import Watch

__all__ = ["add_watch_command", "run_watch"]


def add_watch_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "watch",
        help="logged recall per time window, a drop against a baseline flagged (exit 1)",
        description="Read logged records (RecallLogger's JSONL sink, eval --out files, Ray "
        "runs' directories), report each metric per time window with its interval, and flag a "
        "drop against the baseline windows. The false-alarm rate holds for the whole log. "
        "Exit 1 when a drop is flagged, 0 otherwise, 2 on bad usage or input.",
    )
    parser.add_argument("logs", type=Path, nargs="+", metavar="LOG", help="logs to read")
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--window", default="1d", help="window length: 15m, 1h, 1d, 1w (1d)")
    size.add_argument(
        "--window-records",
        type=int,
        metavar="N",
        help="windows of N records in time order instead (for files without timestamps)",
    )
    parser.add_argument(
        "--baseline",
        default="first:5",
        help="the baseline: the first N windows, first:N (first:5)",
    )
    parser.add_argument("--baseline-from", help="the baseline's start (ISO time, UTC if no zone)")
    parser.add_argument("--baseline-to", help="the baseline's end (ISO time, excluded)")
    parser.add_argument(
        "--metric", action="append", help="metric to watch (repeatable; default: every one)"
    )
    parser.add_argument(
        "--false-alarm",
        type=float,
        default=0.05,
        help="chance of an alarm on a log with no drop, for the whole log (0.05)",
    )
    parser.add_argument(
        "--labels",
        type=Path,
        action="append",
        help="people's labels of whole answers (review --answers): correct the means",
    )
    parser.add_argument("--report", type=Path, help="write an HTML page with the time series")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.set_defaults(func=run_watch)


def run_watch(args: argparse.Namespace, console: Console | None = None) -> int:
    from rich.markup import escape

    from .._analysis.watch import watch
    from ._exit import GATE_FAILED, OK, USAGE_ERROR
    from ._text import PlainConsole

    console = console or PlainConsole()
    try:
        result = watch(
            args.logs,
            window=args.window if args.window_records is None else args.window_records,
            baseline=_baseline(args),
            metrics=args.metric,
            false_alarm=args.false_alarm,
            labels=args.labels,
        )
    except (OSError, SampleError, ImportError) as err:
        console.print(f"[red]error:[/] {escape(str(err))}", soft_wrap=True)
        return USAGE_ERROR
    if args.json:
        print(json.dumps(to_dict(result), indent=2))
    else:
        print_watch(result, console)
    if args.report:
        from .._report.watch_report import watch_report

        args.report.write_text(watch_report(result, [str(p) for p in args.logs]), "utf-8")
        if not args.json:
            console.print(f"report: {args.report}")
    return GATE_FAILED if result.flagged else OK


def _baseline(args: argparse.Namespace) -> int | tuple[datetime, datetime]:
    if args.baseline_from or args.baseline_to:
        if not (args.baseline_from and args.baseline_to):
            raise_usage("--baseline-from and --baseline-to go together")
        return _time(args.baseline_from, "--baseline-from"), _time(
            args.baseline_to, "--baseline-to"
        )
    text = str(args.baseline)
    head, _, count = text.partition(":")
    if head != "first" or not count.isdigit() or int(count) < 1:
        raise_usage(f"--baseline is first:N (N >= 1 windows), not {text!r}")
    return int(count)


def _time(text: str, flag: str) -> datetime:
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise_usage(f"{flag} must be an ISO time (2026-11-01 or 2026-11-01T08:00), not {text!r}")
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def raise_usage(message: str) -> NoReturn:
    raise SampleError(message)


def to_dict(result: Watch) -> dict[str, object]:
    def estimate(e: object) -> object:  # an infinite standard error (one record) is null
        finite = {k: None if v == float("inf") else v for k, v in vars(e).items()}
        return None if e is None else finite

    return {
        "window": result.window,
        "false_alarm": result.false_alarm,
        "statement": result.statement(),
        "tests": result.tests,
        "baseline_windows": result.baseline_windows,
        "flagged": result.flagged,
        "metrics": {
            name: {
                "baseline": estimate(result.baseline[name]),
                "windows": [
                    {
                        "index": w.index,
                        "start": None if w.start is None else w.start.isoformat(),
                        "end": None if w.end is None else w.end.isoformat(),
                        "scored": w.scored,
                        "unscorable": w.unscorable,
                        "estimate": estimate(w.estimate),
                        "judge_mean": w.judge,
                        "baseline": w.baseline,
                    }
                    for w in result.windows[name]
                ],
            }
            for name in result.metrics
        },
        "alarms": [vars(a) for a in result.alarms],
    }


def print_watch(result: Watch, console: Console) -> None:
    from rich.markup import escape
    from rich.table import Table

    for name in result.metrics:
        base = result.baseline[name]
        table = Table(title=escape(f"{name} per {result.window}"), title_justify="left")
        for column in ("window", "scored", "unscorable", "mean", "interval", ""):
            right = column not in ("window", "")
            table.add_column(column, justify="right" if right else "left", no_wrap=column != "")
        flagged = {a.window: a for a in result.alarms if a.metric == name}
        for w in result.windows[name]:
            when = f"#{w.index + 1}" if w.start is None else w.start.strftime("%Y-%m-%d %H:%M")
            e = w.estimate
            mark = "baseline" if w.baseline else ""
            if w.index in flagged:
                a = flagged[w.index]
                mark = f"[red]DROP -{a.drop:.3f}[/] p={a.p_value:.2g}"
            mark = ", ".join(x for x in (mark, escape(result.note(w))) if x)
            table.add_row(
                when,
                str(w.scored),
                str(w.unscorable),
                "n/a" if e is None else f"{e.mean:.3f}",
                "" if e is None else f"[{e.low:.3f}, {e.high:.3f}]",
                mark,
            )
        console.print(table)
        if base is not None:
            console.print(
                f"baseline ({len(result.baseline_windows)} windows): {base.mean:.3f} "
                f"[{base.low:.3f}, {base.high:.3f}] {result.confidence:.0%} interval"
                + (" corrected by labels" if base.method == "ppi" else "")
            )
    console.print(result.statement())
    if result.alarms:
        first = result.alarms[0]
        console.print(
            f"[red]drop flagged[/]: {len(result.alarms)} window(s), first {first.metric} "
            f"window #{first.window + 1}"
        )
    else:
        console.print("no drop flagged")
