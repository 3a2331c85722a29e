"""The ``ragrecall`` command: ``eval`` (score a dataset, gate in CI), ``claims`` (decompose
once, lock the claims), ``compare`` (two runs), ``generate`` (a checked test set from your
documents), ``review`` and ``calibrate`` (check the
judge against a person's labels), ``watch`` (logged recall over time), ``demo`` (a real
evaluation on the embedded judge) and ``judge``."""

from __future__ import annotations

# First, before anything that takes time: on the command line, Ctrl-C or SIGTERM now exits
# 130 / 143 quietly, and from here to the process's end no moment is left without a handler.
from . import _early

# isort: split

import argparse
import sys
from collections.abc import Callable, Sequence
from importlib import import_module
from typing import TYPE_CHECKING

from .. import __version__

if TYPE_CHECKING:
    from rich.console import Console

    from .._report.evaluation import EvaluationReport

__all__ = ["main", "print_report"]

# Each command: its one-line help, and the module and function that add its arguments. Only
# the command being run is imported (langchain, the prompts, pydantic take seconds); the
# others are listed with their help (``_parser(everything=True)`` builds them all).
_COMMANDS: dict[str, tuple[str, str, str]] = {
    "eval": (
        "score a dataset (JSONL/CSV/Parquet file or a directory of them)",
        "._eval",
        "add_eval_command",
    ),
    "claims": (
        "decompose each reference into claims once and write them to a JSONL file",
        "._claims",
        "add_claims_command",
    ),
    "generate": (
        "generate a checked test set (questions and references) from your documents",
        "._generate",
        "add_generate_command",
    ),
    "compare": (
        "compare two runs' results (A = baseline, B = candidate) sample by sample",
        "._compare",
        "add_compare_command",
    ),
    "review": (
        "pick verdicts of a run's results for a person to label (HTML page and CSV)",
        "._review",
        "add_review_command",
    ),
    "calibrate": (
        "fit the judge's confidence and decision to a person's labels",
        "._calibrate",
        "add_calibrate_command",
    ),
    "watch": (
        "logged recall per time window, a drop against a baseline flagged (exit 1)",
        "._watch",
        "add_watch_command",
    ),
    "demo": ("score the bundled example dataset on the embedded judge, offline", "", ""),
    "judge": ("the embedded local judge", "._judge", "add_judge_commands"),
}


def main(argv: Sequence[str] | None = None) -> int:
    restore = _early.install()  # starting: a signal exits quietly, until guarded runs the command
    try:
        args = _parser(_command(sys.argv[1:] if argv is None else argv)).parse_args(argv)
        from ._exit import guarded

        return guarded(lambda: int(args.func(args)))
    finally:
        restore()


def _command(argv: Sequence[str]) -> str | None:
    """The command named on the line (the first word not an option), if any."""
    return next((word for word in argv if not word.startswith("-")), None)


def _parser(command: str | None = None, *, everything: bool = False) -> argparse.ArgumentParser:
    """The parser, with ``command``'s arguments (or every command's)."""
    parser = argparse.ArgumentParser(
        prog="ragrecall",
        description="Context recall for retrieval-augmented generation: eval scores a dataset "
        "(and gates CI), claims locks a dataset's claims, compare tests two runs against each "
        "other, generate makes a checked test set from your documents, review picks verdicts "
        "for a person to label and calibrate fits the judge to the "
        "labels, watch follows logged recall over time, demo runs a real evaluation on the "
        "embedded judge, judge serves it.",
    )
    parser.add_argument("--version", action="version", version=f"ragrecall {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    for name, (about, module, function) in _COMMANDS.items():
        if name == "demo":
            demo = commands.add_parser(name, help=about)
            demo.add_argument(
                "--judge", default=None, help="'provider:model' (default: embedded judge)"
            )
            demo.set_defaults(func=_demo)
        elif everything or name == command:
            add: Callable[[argparse._SubParsersAction[argparse.ArgumentParser]], None]
            add = getattr(import_module(module, __name__), function)
            add(commands)
        else:
            commands.add_parser(name, help=about)
    return parser


def _demo(args: argparse.Namespace) -> int:
    from importlib import resources

    from .._api import evaluate
    from .._metrics.context_recall import ContextRecall
    from ._exit import GATE_FAILED, OK
    from ._text import PlainConsole

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
    from rich.markup import escape
    from rich.table import Table

    from ._text import PlainConsole

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
