"""``ragrecall claims DATA --out claims.jsonl``: decompose each reference once and write the
claim sets, to read, edit, keep in a repository, and score against with ``eval --claims``."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .._core.errors import JudgeError, SampleError
from ._inputs import (
    add_input_command,
    check_needs,
    check_writable,
    claim_cache,
    claim_mode,
    judge_spec,
    read_input,
)

if TYPE_CHECKING:
    from rich.console import Console

    from .._core.schemas import ClaimSet, Sample
    from .._metrics.context_recall import ContextRecall

__all__ = ["add_claims_command"]


def add_claims_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    about = "decompose each reference into claims once and write them to a JSONL file"
    p = add_input_command(commands, "claims", about, __doc__)
    p.add_argument("--out", type=Path, required=True, help="the claim sets' JSONL file")
    p.add_argument("--concurrency", type=int, default=4, help="references decomposed at once")
    p.set_defaults(func=run_claims)


def run_claims(args: argparse.Namespace, console: Console | None = None) -> int:
    import asyncio

    from rich.markup import escape

    from .._core.schemas import Usage
    from .._metrics.base import MetricOptions
    from .._metrics.claims.sets import write_claim_sets
    from .._metrics.context_recall import ContextRecall
    from ._exit import OK, USAGE_ERROR, output_failed
    from ._text import PlainConsole

    console = console or PlainConsole()
    err = PlainConsole(stderr=True)
    try:
        check_writable(args.out, "--out")
        samples = read_input(args, err)
        check_needs(samples, ["context_recall"], args.data)  # refused as eval refuses it
        options = MetricOptions(claims=claim_mode(args), claim_cache=claim_cache(args))
        recall = ContextRecall.from_options(judge_spec(args), options)
        tasks = list({s.key(): s for s in samples}.values())
        claim_sets = asyncio.run(_decompose(recall, tasks, max(args.concurrency, 1)))
    except (SampleError, JudgeError, OSError, ValueError) as error:
        err.print(f"[red]error:[/] {escape(str(error))}", soft_wrap=True)
        return USAGE_ERROR
    try:
        written = write_claim_sets(args.out, zip(tasks, claim_sets, strict=True))
    except OSError as error:  # a full disk, a folder removed: exit 6, as eval's outputs
        note = "run again to write them (claims the judge made are kept in the claim store)"
        return output_failed(error, f"the claim sets {escape(str(args.out))}", None, err, note)
    usage = sum((c.usage for c in claim_sets), Usage())
    sources = {s: sum(c.source == s for c in claim_sets) for s in ("judge", "store", "rules")}
    console.print(
        f"{written} claim sets ({sum(len(c.claims) for c in claim_sets)} claims) in {args.out}; "
        f"decomposed now {sources['judge']}, from the claim store {sources['store']}, by rule "
        f"{sources['rules']}; judge calls {usage.calls}"
    )
    return OK


async def _decompose(
    recall: ContextRecall, samples: Sequence[Sample], concurrency: int
) -> list[ClaimSet]:
    import asyncio

    gate = asyncio.Semaphore(concurrency)

    async def one(sample: Sample) -> ClaimSet:
        async with gate:
            return await recall.aclaim_set(sample)

    return list(await asyncio.gather(*(one(s) for s in samples)))
