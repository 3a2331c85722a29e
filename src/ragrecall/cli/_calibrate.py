"""``ragrecall calibrate LABELS``: fit the judge to a person's labels (from ``review``) and
write a calibration profile for ``eval --calibration``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from .._core.errors import CalibrationError, SampleError

if TYPE_CHECKING:
    from rich.console import Console

    from .._metrics.decision import Agreement

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
    p.add_argument(
        "--prior-shift",
        type=Path,
        metavar="RESULTS",
        help="the results of the data the profile is for (a results file or a Ray run's "
        "directory): move the scaling to its share of supported claims (EM on its "
        "P(supported); for data unlike the labelled)",
    )
    p.set_defaults(func=run_calibrate)


def run_calibrate(args: argparse.Namespace, console: Console | None = None) -> int:
    from rich.markup import escape
    from rich.table import Table

    from .._analysis.calibrate import calibrate
    from ..stats import ECE_MIN_LABELS
    from ._exit import OK, USAGE_ERROR
    from ._text import PlainConsole

    console = console or PlainConsole()
    err = PlainConsole(stderr=True)
    try:
        shift_to = None if args.prior_shift is None else _p_supported(args.prior_shift)
        profile = calibrate(
            args.labels, folds=max(args.folds, 2), seed=args.seed, prior_shift_to=shift_to
        )
        profile.save(args.out)
    except (CalibrationError, SampleError, OSError, ImportError) as error:
        err.print(f"[red]error:[/] {escape(str(error))}", soft_wrap=True)
        return USAGE_ERROR
    table = Table(
        title=f"agreement with the person ({profile.labels} labels)", title_justify="left"
    )
    for column in ("", "n", "balanced accuracy", "Cohen's kappa", "Brier", "log loss", "ECE"):
        table.add_column(column)
    for name, a in profile.agreement.items():
        table.add_row(name.replace("_", " "), str(a.n), *_cells(a))
    console.print(table)
    console.print(
        "Brier and log loss: of P(supported) (after: held-out folds; lower is better). ECE: "
        f"debiased, from {ECE_MIN_LABELS} labelled claims up, beside (in parentheses) the mean "
        "and 90th percentile a perfectly calibrated judge would show at this n.",
        soft_wrap=True,
    )
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
    if a.ece is not None and a.ece_calibrated is not None:
        ece += f" (calibrated: {a.ece_calibrated[0]:.3f}, {a.ece_calibrated[1]:.3f})"
    return [
        value(a.balanced_accuracy, a.balanced_accuracy_ci),
        value(a.kappa, a.kappa_ci),
        value(a.brier, a.brier_ci),
        value(a.log_loss, a.log_loss_ci),
        ece,
    ]


def _p_supported(path: Path) -> list[float]:
    """Every claim's raw P(supported) in a run's results (context recall's verdicts)."""
    from .._core.schemas import RecallResult
    from .._running.output import read_records

    values = [
        v.p_supported
        for record in read_records(path)
        for result in record.results.values()
        if isinstance(result, RecallResult)
        for v in result.verdicts
        if v.p_supported is not None
    ]
    if not values:
        raise CalibrationError(f"{path}: no verdict with P(supported) to shift the prior to")
    return values
