"""What ``eval`` prints when a run ends: the summary table, the means corrected by people's
labels (``--labels``), the lowest samples with their missing claims, the noisiest across
repeats, this run's judge usage (and its cost where the judge's price is known), the HTML
report and the JSON summary; then the gates (``--min-score``, ``--max-unscorable``, the budget)
and the exit code. Samples a budget never reached are counted apart ("not reached"): neither
scored nor unscorable, so ``--max-unscorable`` does not count them."""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Sequence
from dataclasses import replace

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .._analysis.corrected import CorrectedMean
from .._analysis.summary import RunSummary
from .._core.schemas import Usage
from .._metrics.estimate import known_price
from .._report.eval_report import eval_report
from .._running.budget import Budget
from .._running.store import Record
from ._exit import BUDGET_STOPPED, GATE_FAILED, JUDGE_UNAVAILABLE, OK, output_failed
from ._text import PlainConsole

__all__ = ["finish", "judge_failed"]


def judge_failed(record: Record) -> bool:
    """Whether every metric of ``record`` is unscorable because its judge call raised (no
    reply came: a server that cannot be reached, a key refused, ...)."""
    return all(
        r.status == "unscorable" and r.reason.startswith("judge failed:")
        for r in record.results.values()
    )


def finish(
    summary: RunSummary,
    records: list[Record],
    budget: Budget,
    usage: Usage,
    elapsed: float,
    total_samples: int,
    args: argparse.Namespace,
    console: Console,
    corrected: Sequence[CorrectedMean] = (),
    judge_failures: int = 0,
) -> int:
    """Print the run's summary and outputs; the exit code. ``judge_failures``: the samples
    whose every judge call failed (``judge_failed``); all of them is exit 4, not a gate."""
    console.print(_table(summary, total_samples, args.repeats))
    not_reached = total_samples - summary.count
    for c in corrected:
        _print_corrected(c, console)
    _print_worst(summary, console)
    if args.repeats > 1:
        _print_spread(summary, console)
    u = usage
    console.print(
        f"this run: judge calls {u.calls} ({u.retries} retries), prompt tokens {u.prompt_tokens} "
        f"({u.cached_tokens} cached), completion tokens {u.completion_tokens}, "
        f"{elapsed:.1f} s" + _cost(u, args)
    )
    if args.out:
        console.print(f"results: {args.out}")
    unwritten: int | None = None
    if args.report:
        try:
            page = eval_report(
                [_with_answer_intervals(r, corrected) for r in records],
                summary.names,
                title=str(args.data),
                corrected=corrected,
                not_reached=not_reached,
            )
            args.report.write_text(page, "utf-8")
            console.print(f"report: {args.report}")
        except OSError as err:
            kept = None if args.out else records
            what = f"the report {args.report}"
            unwritten = output_failed(err, what, kept, PlainConsole(stderr=True))
    if getattr(args, "summary_json", None):
        try:
            text = json.dumps(summary_json(summary, total_samples, corrected), indent=2)
            args.summary_json.write_text(text + "\n", "utf-8")
            console.print(f"summary: {args.summary_json}")
        except OSError as err:
            kept = None if args.out else records
            what = f"the summary {args.summary_json}"
            unwritten = output_failed(err, what, kept, PlainConsole(stderr=True))
    if summary.count and judge_failures == summary.count and not budget.spent:
        worst = summary.worst()
        reason = next(iter(worst[0].results.values())).reason if worst else ""
        PlainConsole(stderr=True).print(
            f"[red]error:[/] every judge call failed, on all {summary.count} samples: the "
            f"judge cannot be used (first: {escape(reason)}); no score was made",
            soft_wrap=True,
        )
        return JUDGE_UNAVAILABLE
    failures = []
    first = summary.metrics[0]
    mean, which = first.mean, "mean"
    for c in corrected:  # with people's labels the gate reads the corrected mean
        if c.metric == first.name:
            mean, which = c.ppi.estimate, "corrected mean"
    if args.min_score is not None and (mean is None or mean < args.min_score):
        shown = "n/a" if mean is None else f"{mean:.3f}"
        failures.append(f"{first.name} {which} {shown} is below --min-score {args.min_score}")
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
            f"samples done, {not_reached} not reached; a sample starts only if its estimated "
            "calls fit"
            + (f"; {over} over: samples in flight spent more than estimated" if over else "")
            + (f"; run again to resume from {args.out}" if args.out else ""),
            soft_wrap=True,
        )
        return BUDGET_STOPPED
    for failure in failures:
        console.print(f"[red]FAIL[/] {escape(failure)}")
    if not failures:
        console.print("[green]PASS[/]")
    if unwritten is not None:
        return unwritten
    return GATE_FAILED if failures else OK


def _print_worst(summary: RunSummary, console: Console) -> None:
    name = summary.names[0]
    worst = summary.worst()
    if not worst:
        return
    console.print(f"[bold]lowest {name}[/]")
    for r in worst:
        result = r.results[name]
        score = r.score(name)
        label = "unscorable" if score is None else f"{score:.2f}"
        console.print(
            f"  [{label}] #{r.index} {escape(r.sample.user_input or r.key)}", highlight=False
        )
        if score is None:
            console.print(f"      reason: {escape(result.reason)}", highlight=False)
        reasons = {v.claim: v.reason for v in result.verdicts}
        for claim in result.missing:
            why = reasons.get(claim)
            console.print(
                f"      [red]missing[/] {escape(claim)}"
                + (f" [dim]({escape(why)})[/]" if why else ""),
                highlight=False,
            )


def _print_spread(summary: RunSummary, console: Console) -> None:
    table = Table(
        title=f"{summary.names[0]}: noisiest samples across repeats", title_justify="left"
    )
    for column in ("sample", "std", "min", "max"):
        table.add_column(column, justify="left" if column == "sample" else "right")
    for std, low, high, label in summary.noisiest():
        table.add_row(escape(label), f"{std:.3f}", f"{low:.2f}", f"{high:.2f}")
    console.print(table)


def _table(summary: RunSummary, total_samples: int, repeats: int) -> Table:
    table = Table(
        title=f"ragrecall eval: {summary.count} of {total_samples} samples",
        title_justify="left",
    )
    for column in ("metric", "mean", "95% CI", "scored", "unscorable"):
        table.add_column(column, justify="left" if column == "metric" else "right")
    not_reached = total_samples - summary.count
    if not_reached:
        table.add_column("not reached", justify="right")
    with_judge = any(s.ci_with_judge is not None for s in summary.metrics)
    if with_judge:
        table.add_column("95% CI with judge uncertainty", justify="right")
    if repeats > 1:
        table.add_column("judge noise ±", justify="right")
        table.add_column("mean / max sample std", justify="right")
    for s in summary.metrics:
        mean, ci = s.mean, s.ci
        row = [
            s.name,
            "n/a" if mean is None else f"{mean:.3f}",
            "" if ci is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]",
            str(len(s.scores)),
            f"{s.unscorable} ({s.unscorable_share:.0%})",
        ]
        if not_reached:
            row.append(str(not_reached))
        if with_judge:
            both = s.ci_with_judge
            row.append("" if both is None else f"[{both[0]:.3f}, {both[1]:.3f}]")
        if repeats > 1:
            noise = s.noise_se
            row.append("" if noise is None else f"{1.96 * noise:.3f}")
            row.append(f"{statistics.fmean(s.stds):.3f} / {max(s.stds):.3f}" if s.stds else "")
        table.add_row(*row)
    return table


def summary_json(
    summary: RunSummary, total_samples: int, corrected: Sequence[CorrectedMean] = ()
) -> dict[str, object]:
    """The run's summary as JSON-ready data (``eval --summary-json``): per metric its mean,
    95 % bootstrap CI and counts, and with ``--labels`` its ``corrected`` figures."""
    metrics: dict[str, object] = {}
    for s in summary.metrics:
        ci = s.ci
        metrics[s.name] = {
            "mean": s.mean,
            "ci95": None if ci is None else list(ci),
            "scored": len(s.scores),
            "unscorable": s.unscorable,
            "not_reached": total_samples - summary.count,
        }
    return {
        "samples": total_samples,
        "done": summary.count,
        "metrics": metrics,
        "corrected": {c.metric: c.to_dict() for c in corrected},
    }


def _print_corrected(c: CorrectedMean, console: Console) -> None:
    p = c.ppi
    level = f"{p.confidence:.0%}"
    console.print(
        f"[bold]{escape(c.metric)} corrected by {p.labels} labelled answers[/] (of {p.total}; "
        f"{escape(p.method)}): {p.estimate:.3f} [{p.low:.3f}, {p.high:.3f}] {level} interval; "
        f"the judge's mean {p.judge_mean:.3f}",
        highlight=False,
        soft_wrap=True,
    )
    bias = f"{p.judge_bias:+.3f}"
    if c.bias_interval is not None:
        bias += f" [{c.bias_interval[0]:+.3f}, {c.bias_interval[1]:+.3f}] {level}"
    console.print(
        f"  judge's bias (judge - people on the labelled answers) {bias}; labels alone "
        f"[{p.labels_only[0]:.3f}, {p.labels_only[1]:.3f}]",
        highlight=False,
        soft_wrap=True,
    )
    if c.answer_radius is not None:
        console.print(
            f"  each answer's {level} interval: its score +/- {c.answer_radius:.3f} "
            f"(split-conformal on the {p.labels} labelled answers)",
            highlight=False,
            soft_wrap=True,
        )
    notes = [
        (c.unmatched, "labelled answers match no sample of this run (not used)"),
        (c.unscorable, "labelled answers are unscorable in this run (not used)"),
        (c.other_labels, "labels of single claims (for calibrate; not used)"),
    ]
    for count, what in notes:
        if count:
            console.print(f"  [yellow]{count}[/] {what}", highlight=False, soft_wrap=True)


def _cost(usage: Usage, args: argparse.Namespace) -> str:
    """The text ", cost $X (at IN/OUT USD per M tokens)" where the judge's price is known (its list
    price, as the dry run takes it, or ``--price-in`` / ``--price-out``), else ""."""
    known = known_price(getattr(args, "judge", None)) or (0.0, 0.0)
    given = getattr(args, "price_in", None), getattr(args, "price_out", None)
    price_in = known[0] if given[0] is None else float(given[0])
    price_out = known[1] if given[1] is None else float(given[1])
    if not (price_in or price_out):
        return ""
    cost = (usage.prompt_tokens * price_in + usage.completion_tokens * price_out) / 1e6
    return f", cost ${cost:.4f} (at {price_in}/{price_out} USD per M tokens)"


def _with_answer_intervals(record: Record, corrected: Sequence[CorrectedMean]) -> Record:
    """``record`` with each labelled metric's result taking its split-conformal interval, as
    ``evaluate``'s report holds it (so both pages show the same)."""
    results = dict(record.results)
    for c in corrected:
        if c.metric in results:
            results[c.metric] = c.answer_interval(results[c.metric])
    return replace(record, results=results)
