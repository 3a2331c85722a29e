"""``eval DATA --from-traces TRACES``: score the retrievals of a trace export, DATA being the
references; write the scores back onto the spans with ``--traces-out``."""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .._core.errors import SampleError
from ._inputs import check_needs, read_input

if TYPE_CHECKING:
    from rich.console import Console

    from .._core.schemas import RecallResult, Sample
    from .._io.traces import TracedSamples
    from .._running.engines.base import Identity
    from .._running.store import Record

__all__ = ["add_traces_arguments", "finish_traces", "read_samples"]


def add_traces_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--from-traces",
        type=str,
        default=None,
        metavar="TRACES",
        help="score the retriever spans of this trace export (OTLP JSON, or LangSmith runs); "
        "DATA is then the references: question, reference and/or reference_ids, sample_id",
    )
    p.add_argument(
        "--join-on",
        default="question",
        metavar="ATTRIBUTE",
        help="with --from-traces: 'question' (the default: a span's input is the reference's "
        "question) or the span attribute holding the reference's sample_id, e.g. "
        "metadata.sample_id",
    )
    p.add_argument(
        "--contents",
        default=None,
        metavar="FILE",
        help="with --from-traces: document texts by id (.jsonl/.json/.csv of id, text) for "
        "spans that record ids only",
    )
    p.add_argument(
        "--traces-out",
        type=Path,
        default=None,
        metavar="FILE",
        help="with --from-traces (OTLP JSON): write the traces here with the scores on the "
        "retriever spans (OpenInference evaluations.*, gen_ai.evaluation.result events)",
    )


def read_samples(
    args: argparse.Namespace, err: Console
) -> tuple[list[Sample], TracedSamples | None]:
    """The samples to score: DATA's rows, or with --from-traces the traced retrievals joined
    with DATA's references (notes on what the traces lacked go to ``err``)."""
    from rich.markup import escape

    from .._io.traces import load_traces

    if not args.from_traces:
        given = [f"--{n}" for n in ("join-on", "contents", "traces-out") if _set(args, n)]
        if given:
            raise SampleError(f"{', '.join(given)} needs --from-traces")
        samples = read_input(args, err)
        check_needs(samples, args.metric or ["context_recall"], args.data, _given(args))
        return samples, None
    references = read_input(args, err)
    traced = load_traces(args.from_traces, references, join_on=args.join_on, contents=args.contents)
    for note in traced.notes:
        err.print(f"note: {escape(note)}", soft_wrap=True)
    if traced.unmatched:
        err.print(
            f"note: {len(traced.unmatched)} retrievals matched no reference (first query: "
            f"{escape(repr(traced.unmatched[0]))})",
            soft_wrap=True,
        )
    if not traced.samples:
        raise SampleError(
            f"{args.from_traces}: no retriever span matched any of the {len(references)} "
            f"references (--join-on {args.join_on})"
        )
    check_needs(traced.samples, args.metric or ["context_recall"], args.from_traces, _given(args))
    return traced.samples, traced


def finish_traces(
    traced: TracedSamples,
    records: Iterable[Record],
    ids: Sequence[Identity],
    args: argparse.Namespace,
    console: Console,
) -> None:
    """Print the references not assessed; write ``--traces-out``."""
    from rich.markup import escape

    missing = traced.not_assessed
    if missing:
        shown = "; ".join(escape(n.question or n.sample_id or "") for n in missing[:3])
        more = ", ..." if len(missing) > 3 else ""
        console.print(
            f"not assessed: {len(missing)} references had no retriever span (not scored, "
            f"not counted): {shown}{more}",
            highlight=False,
            soft_wrap=True,
        )
    if args.traces_out:
        index = {sample_id: i for i, (sample_id, _) in enumerate(ids)}
        rows: list[dict[str, RecallResult] | None] = [None] * len(traced.samples)
        for record in records:
            if record.id in index:
                rows[index[record.id]] = record.results
        try:
            spans = traced.write_scores(args.traces_out, rows)
        except (OSError, ValueError) as err:
            console.print(f"[red]error:[/] --traces-out: {escape(str(err))}", soft_wrap=True)
            return
        console.print(
            f"traces with scores: {escape(str(args.traces_out))} ({spans} retriever spans)",
            soft_wrap=True,
        )


def _given(args: argparse.Namespace) -> tuple[str, ...]:
    """Fields the input need not have: the claims of ``--claims``."""
    return ("reference_claims",) if getattr(args, "claims", None) else ()


def _set(args: argparse.Namespace, name: str) -> bool:
    value = getattr(args, name.replace("-", "_"))
    return value is not None and value != "question"
