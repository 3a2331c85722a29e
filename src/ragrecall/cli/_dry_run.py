"""``eval --dry-run``: the judge calls, tokens and price a run would take; no judge called."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import asdict

from rich.console import Console
from rich.table import Table

from .._core.schemas import Sample
from .._judge.resolve import JudgeLike
from .._metrics.base import MetricOptions
from .._metrics.estimate import estimate_cost, known_price, recall_plan
from .._running.engines.base import identities, pending
from .._running.store import read_file
from ._exit import OK

__all__ = ["dry_run"]


def dry_run(
    args: argparse.Namespace,
    samples: Sequence[Sample],
    names: Sequence[str],
    judge: JudgeLike,
    options: MetricOptions,
    console: Console,
) -> int:
    plan = recall_plan(judge, options)
    done = {r.id: r.content for r in read_file(args.out)} if args.out and args.out.is_file() else {}
    todo = [samples[i] for i in pending(identities(samples), done)]
    est = estimate_cost(todo, names, claims=options.claims, repeats=args.repeats, **asdict(plan))
    table = Table(title="dry run: estimated judge work (no judge called)", title_justify="left")
    table.add_column("")
    table.add_column("estimate", justify="right")
    qualifier = "" if est.exact else "~"
    table.add_row("samples", str(est.samples))
    table.add_row("metrics", ", ".join(names))
    table.add_row(
        "strategy / evidence / verdict", f"{plan.strategy} / {plan.evidence} / {plan.verdict}"
    )
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
