"""``ragrecall calibrate LABELS``: fit the judge to a person's labels (from ``review``) and
write a calibration profile for ``eval --calibration``."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .._calibration import Agreement, calibrate
from .._errors import CalibrationError, SampleError
from ._exit import OK, USAGE_ERROR
from ._text import PlainConsole

__all__ = ["add_calibrate_command", "run_calibrate"]


def add_calibrate_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = commands.add_parser(
        "calibrate",
        help="fit the judge's confidence and decision to a person's labels",
        description=__doc__,
    )
    p.add_argument("labels", type=Path, help="labels: labels.jsonl (review page) or review.csv")
    p.add_argument(
        "--out", type=Path, default=Path("calibration.json"), help="profile (calibration.json)"
    )
    p.add_argument("--folds", type=int, default=5, help="cross-validation folds (5)")
    p.add_argument("--seed", type=int, default=0, help="random seed (0)")
    p.set_defaults(func=run_calibrate)


def run_calibrate(args: argparse.Namespace, console: Console | None = None) -> int:
    console = console or PlainConsole()
    err = PlainConsole(stderr=True)
    try:
        profile = calibrate(args.labels, folds=max(args.folds, 2), seed=args.seed)
        profile.save(args.out)
    except (CalibrationError, SampleError, OSError) as error:
        err.print(f"[red]error:[/] {escape(str(error))}", soft_wrap=True)
        return USAGE_ERROR
    table = Table(
        title=f"agreement with the person ({profile.labels} labels)", title_justify="left"
    )
    for column in ("", "n", "balanced accuracy", "Cohen's kappa", "ECE"):
        table.add_column(column)
    for name, a in profile.agreement.items():
        table.add_row(name.replace("_", " "), str(a.n), *_cells(a))
    console.print(table)
    console.print(
        f"judge {profile.judge}, prompt version {profile.prompt_version}; P(supported) "
        f"scaled by sigmoid({profile.scale_a:.3f} * logit(p) + {profile.scale_b:.3f}); "
        f"support_threshold {profile.support_threshold}, lexical_weight "
        f"{profile.lexical_weight}: {profile.note}. Profile: {args.out} (apply with "
        "eval --calibration)",
        soft_wrap=True,
    )
    return OK


def _cells(a: Agreement) -> list[str]:
    def value(x: float | None, ci: tuple[float, float] | None) -> str:
        if x is None:
            return "n/a"
        return f"{x:.3f}" + ("" if ci is None else f" [{ci[0]:.3f}, {ci[1]:.3f}]")

    ece = "n/a" if a.ece is None else f"{a.ece:.3f}"
    return [value(a.balanced_accuracy, a.balanced_accuracy_ci), value(a.kappa, a.kappa_ci), ece]
