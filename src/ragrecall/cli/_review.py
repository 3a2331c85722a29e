"""``ragrecall review RESULTS``: pick verdicts for a person to label, and write the labelling
page (self-contained HTML) and a CSV for spreadsheets. ``ragrecall calibrate`` reads the labels.
RESULTS is a results file (``eval --out``) or a Ray run's output directory.

With ``--answers N`` it picks N whole answers at random instead (every claim of each, in random
order): their labels give people's recall of each answer, and ``ragrecall eval --labels`` /
``compare --labels`` correct the judge's mean and difference with them."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from .._core.errors import SampleError

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["add_review_command", "run_review"]


def add_review_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = commands.add_parser(
        "review",
        help="pick verdicts of a run's results for a person to label (HTML page and CSV)",
        description=__doc__,
    )
    p.add_argument(
        "results",
        type=Path,
        help="a results file (.jsonl from eval --out) or a Ray run's output directory",
    )
    p.add_argument("--out", type=Path, default=Path("review"), help="folder to write (review)")
    p.add_argument("--metric", default="context_recall", help="metric (context_recall)")
    p.add_argument(
        "--uncertain", type=int, default=None, help="verdicts nearest the decision to pick (40)"
    )
    p.add_argument(
        "--random", type=int, default=None, help="verdicts drawn at random from the rest (40)"
    )
    p.add_argument(
        "--answers",
        type=int,
        default=None,
        metavar="N",
        help="pick N whole answers at random instead (every claim of each), for eval/compare "
        "--labels: a corrected mean or difference",
    )
    p.add_argument("--seed", type=int, default=0, help="random seed (0)")
    p.set_defaults(func=run_review)


def run_review(args: argparse.Namespace, console: Console | None = None) -> int:
    from rich.markup import escape

    from .._analysis.review import pick_answers, pick_for_review
    from .._report.review import review_csv, review_page
    from .._running.output import read_records
    from ._exit import OK, USAGE_ERROR
    from ._text import PlainConsole

    console = console or PlainConsole()
    err = PlainConsole(stderr=True)
    try:
        if args.answers is not None and (args.uncertain is not None or args.random is not None):
            raise SampleError(
                "--answers picks whole answers, --uncertain and --random single claims: "
                "give one or the other"
            )
        if args.answers is not None and args.answers < 1:
            raise SampleError(f"--answers must be at least 1, not {args.answers}")
        records = read_records(args.results)
        try:
            if args.answers is not None:
                items = pick_answers(records, args.metric, answers=args.answers, seed=args.seed)
            else:
                uncertain = 40 if args.uncertain is None else args.uncertain
                share = 40 if args.random is None else args.random
                items = pick_for_review(
                    records, args.metric, uncertain=uncertain, random_share=share, seed=args.seed
                )
        except ValueError as error:
            raise SampleError(f"{args.results}: {error}") from error
        args.out.mkdir(parents=True, exist_ok=True)
        page, table = args.out / "review.html", args.out / "review.csv"
        page.write_text(review_page(items, title=args.results.name), encoding="utf-8")
        review_csv(items, table)
    except (SampleError, OSError, ValueError, ImportError) as error:
        err.print(f"[red]error:[/] {escape(str(error))}", soft_wrap=True)
        return USAGE_ERROR
    if args.answers is not None:
        drawn = len({i.answer for i in items})
        console.print(
            f"{drawn} answers drawn at random ({len(items)} claims; seed {args.seed}): open "
            f"{page} in a browser, label every claim and export the labels, or fill the label "
            f"column of {table}; then ragrecall eval DATA --labels LABELS (or compare A B "
            "--labels LABELS)"
            + (f"; only {drawn} scored answers to draw from" if drawn < args.answers else ""),
            soft_wrap=True,
        )
        return OK
    picks = {k: sum(i.pick == k for i in items) for k in ("uncertain", "random", "unscorable")}
    console.print(
        f"{len(items)} claims to label ({picks['uncertain']} nearest the decision, "
        f"{picks['random']} at random, {picks['unscorable']} of unscorable samples): open "
        f"{page} in a browser and export the labels, or fill the label column of {table}; then "
        "ragrecall calibrate LABELS",
        soft_wrap=True,
    )
    return OK
