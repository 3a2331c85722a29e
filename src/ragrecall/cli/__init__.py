"""The ``ragrecall`` command: ``eval`` (score a dataset, gate in CI), ``claims`` (decompose
once, lock the claims), ``compare`` (two runs), ``generate`` (a checked test set from your
documents), ``review`` and ``calibrate`` (check the
judge against a person's labels), ``demo`` (a real evaluation on the embedded
judge) and ``judge``."""

from __future__ import annotations

# First, before the imports that take seconds: Ctrl-C or SIGTERM now exits 130 / 143 quietly.
from . import _early

# isort: split

import argparse
from collections.abc import Sequence
from importlib import resources

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .. import __version__
from .._analysis.evaluation import EvaluationReport
from .._api import evaluate
from .._metrics.context_recall import ContextRecall
from ._calibrate import add_calibrate_command
from ._claims import add_claims_command
from ._compare import add_compare_command
from ._eval import add_eval_command
from ._exit import GATE_FAILED, OK, guarded
from ._generate import add_generate_command
from ._judge import add_judge_commands
from ._review import add_review_command
from ._text import PlainConsole

__all__ = ["main", "print_report"]


_early.restore()  # the imports are done: from here on, main (and guarded) handle signals


def main(argv: Sequence[str] | None = None) -> int:
    leave_quietly = _early.install()  # until guarded takes over
    try:
        args = _parser().parse_args(argv)
    finally:
        leave_quietly()
    return guarded(lambda: int(args.func(args)))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ragrecall",
        description="Context recall for retrieval-augmented generation: eval scores a dataset "
        "(and gates CI), claims locks a dataset's claims, compare tests two runs against each "
        "other, generate makes a checked test set from your documents, review picks verdicts "
        "for a person to label and calibrate fits the judge to the "
        "labels, demo runs a real evaluation on the embedded judge, judge serves it.",
    )
    parser.add_argument("--version", action="version", version=f"ragrecall {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    add_eval_command(commands)
    add_claims_command(commands)
    add_generate_command(commands)
    add_compare_command(commands)
    add_review_command(commands)
    add_calibrate_command(commands)
    demo = commands.add_parser(
        "demo", help="score the bundled example dataset on the embedded judge, offline"
    )
    demo.add_argument("--judge", default=None, help="'provider:model' (default: embedded judge)")
    demo.set_defaults(func=_demo)
    add_judge_commands(commands)
    return parser


def _demo(args: argparse.Namespace) -> int:
    console = PlainConsole()
    data = resources.files("ragrecall").joinpath("data/example.jsonl")
    with resources.as_file(data) as path:
        console.print(
            f"Scoring context recall of [bold]{path.name}[/] with the "
            f"{'embedded local judge' if args.judge is None else args.judge} ..."
        )
        report = evaluate(path, [ContextRecall(judge=args.judge)], show_progress=True)
    print_report(report, console)
    return OK if not report.unscorable() else GATE_FAILED


def print_report(report: EvaluationReport, console: Console | None = None) -> None:
    """Per-claim verdicts with their chunk and evidence, then the summary."""
    console = console or PlainConsole()
    for name, results in report.results.items():
        for sample, result in zip(report.samples, results, strict=True):
            score = "unscorable" if result.score is None else f"{result.score:.2f}"
            table = Table(
                title=escape(f"{sample.user_input or ''}  [{name} = {score}]"),
                title_justify="left",
                show_lines=True,
                expand=True,
            )
            table.add_column("", width=2)
            table.add_column("claim", ratio=2)
            table.add_column("chunk", no_wrap=True)
            table.add_column("evidence", ratio=3)
            table.add_column("p", justify="right", no_wrap=True)
            for v in result.verdicts:
                p = "" if v.p_supported is None else f"{v.p_supported:.2f}"
                table.add_row(
                    "[green]✓[/]" if v.attributed else "[red]✗[/]",
                    v.claim,
                    ", ".join(v.chunk_ids),
                    v.evidence or f"[dim]{v.reason}[/]",
                    p,
                )
            console.print(table)
            if result.status == "unscorable":
                console.print(f"[red]unscorable:[/] {result.reason}")
        mean = report.scores[name]
        console.print(
            f"[bold]{name}[/]: mean {'n/a' if mean is None else f'{mean:.3f}'} over "
            f"{len(results) - len(report.unscorable(name))} scored of {len(results)}"
        )
    u = report.usage
    console.print(
        f"judge calls {u.calls}, prompt tokens {u.prompt_tokens} ({u.cached_tokens} "
        f"cached), completion tokens {u.completion_tokens}, {report.elapsed_s:.1f} s"
    )
