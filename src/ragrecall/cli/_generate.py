"""``ragrecall generate CORPUS --n N --out testset.jsonl``: a checked test set from your own
documents.

CORPUS is a folder of .txt/.md/.html files or a JSONL file of documents (``id``, ``text``,
optional ``metadata``). The documents are cut into chunks of whole sentences (``--chunk-size``;
``--keep-chunks`` keeps each document, with its id, as one chunk). For each item the judge
writes a question and its reference answer from one chunk, or from two or three for
multi-hop, comparison and aggregation questions (``--mix``); the item is kept only if the
question does not copy the chunks' wording (``--max-overlap``), is no near-duplicate of one
kept, and every claim of the reference is supported by its chunks with verified evidence (the
check of ``context_recall``; a multi-chunk item must need more than one of its chunks).

The rows use RAGAS's names (``user_input``, ``reference``, ``reference_context_ids``,
``reference_contexts``), with ``question_kind``, the checked ``reference_claims`` and the
generator's settings (``generation``). Each row is appended as it is accepted; running the
same command again goes on where it stopped.

Exit codes: 0 made N items; 1 stopped after --max-attempts with fewer; 2 bad usage or input;
3 stopped at --max-calls / --max-tokens (what was made is saved); 4 the judge could not start
or failed (what was made is saved).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from .._core.errors import JudgeError, JudgeModelError
from ._inputs import add_judge_arguments, check_writable, claim_cache, count, judge_spec, seconds

if TYPE_CHECKING:
    from rich.console import Console

    from .._generate.plan import Estimate
    from .._metrics.claims.decompose import ClaimCache

__all__ = ["add_generate_command", "run_generate"]

# --mix's help names the kinds and their default weights, which live with the prompts: read
# only when the help is shown, so that building the parser (and a usage error) imports neither.
_MIX_HELP = "the question kinds' weights (default {mix}); kinds: {kinds}"


class _Help(argparse.RawDescriptionHelpFormatter):
    """The description as written; ``--mix``'s help with the kinds and default weights."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = super()._get_help_string(action)
        if text != _MIX_HELP:
            return text
        from .._generate.plan import DEFAULT_MIX
        from .._generate.prompts import KINDS

        mix = ",".join(f"{k}={w}" for k, w in DEFAULT_MIX.items())
        return text.format(mix=mix, kinds=", ".join(KINDS))


def add_generate_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = commands.add_parser(
        "generate",
        help="generate a checked test set (questions and references) from your documents",
        description=(__doc__ or "").replace("``", ""),
        formatter_class=_Help,
    )
    p.add_argument("corpus", type=Path, help="a folder of .txt/.md/.html files or a JSONL file")
    p.add_argument("--n", type=int, required=True, help="items to make")
    p.add_argument("--out", type=Path, required=True, help="the test set's JSONL file")
    p.add_argument("--rejected", type=Path, default=None, metavar="FILE",
                   help="write the rejected items here, with their reason")  # fmt: skip
    p.add_argument("--mix", default=None, metavar="KIND=W,...", help=_MIX_HELP)
    p.add_argument("--seed", type=int, default=0, help="fixes every attempt's kind and chunks")
    p.add_argument("--chunk-size", type=int, default=1000, help="characters per chunk (1000)")
    p.add_argument("--chunk-overlap", type=int, default=1, help="sentences chunks share (1)")
    p.add_argument("--keep-chunks", action="store_true",
                   help="each document is one chunk, its id kept")  # fmt: skip
    p.add_argument(
        "--max-overlap",
        type=float,
        default=0.5,
        help="the largest share of a question's word trigrams found in its chunks (0.5)",
    )
    p.add_argument("--max-attempts", type=int, default=None,
                   help="attempts this run may make (default 4 * N + 10)")  # fmt: skip
    p.add_argument("--max-calls", type=count, default=None,
                   help="stop once this many judge calls are spent (exit 3)")  # fmt: skip
    p.add_argument("--max-tokens", type=count, default=None,
                   help="stop once this many tokens are spent (exit 3)")  # fmt: skip
    p.add_argument("--dry-run", action="store_true",
                   help="print the estimated judge calls and tokens; call no judge")  # fmt: skip
    p.add_argument("--timeout", type=seconds, default=None, help="seconds per judge call")
    p.add_argument(
        "--claims-store",
        type=Path,
        default=None,
        metavar="PATH",
        help="the SQLite claim store the references' claims go to (default: the user cache's)",
    )
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress bar (default: when stderr is a terminal)",
    )
    add_judge_arguments(p)
    p.set_defaults(func=run_generate)


def parse_mix(text: str | None) -> dict[str, float]:
    """``"single=0.5,comparison=0.5"`` -> the weights, checked (ValueError names the part)."""
    from .._generate.plan import DEFAULT_MIX, check_mix

    if not text:
        return dict(DEFAULT_MIX)
    mix: dict[str, float] = {}
    for part in text.split(","):
        name, sep, weight = part.partition("=")
        try:
            mix[name.strip()] = float(weight)
        except ValueError:
            raise ValueError(f"--mix: expected 'kind=weight' pairs, got {part!r}") from None
        if not sep:
            raise ValueError(f"--mix: expected 'kind=weight' pairs, got {part!r}")
    try:
        return check_mix(mix)
    except ValueError as err:
        raise ValueError(f"--mix: {err}") from None


def run_generate(args: argparse.Namespace, console: Console | None = None) -> int:
    """The ``generate`` command; returns the exit code."""
    from rich.markup import escape
    from rich.table import Table

    from .._generate.check import REASONS
    from .._generate.plan import estimate
    from .._generate.prompts import KINDS
    from .._generate.run import generate, load_chunks
    from .._metrics.context_recall import ContextRecall
    from ._exit import BUDGET_STOPPED, GATE_FAILED, JUDGE_UNAVAILABLE, OK, USAGE_ERROR, stopped
    from ._text import PlainConsole

    console = console or PlainConsole()
    err = PlainConsole(stderr=True)
    try:
        if args.n < 1:
            raise ValueError("--n must be at least 1")
        mix = parse_mix(args.mix)
        chunk_size = None if args.keep_chunks else args.chunk_size
        if args.dry_run:
            chunks = load_chunks(args.corpus, chunk_size, args.chunk_overlap)
            done = _lines(args.out)
            return _dry_run(estimate(chunks, args.n, mix, done), done, console)
        check_writable(args.out, "--out")
        if args.rejected:
            check_writable(args.rejected, "--rejected")
        cache: ClaimCache | None = claim_cache(args)
        policy = {} if args.timeout is None else {"timeout": args.timeout}
        recall = ContextRecall(judge_spec(args), cache=cache, **policy)
        report = generate(
            args.corpus,
            args.n,
            out=args.out,
            rejected_out=args.rejected,
            mix=mix,
            seed=args.seed,
            chunk_size=chunk_size,
            chunk_overlap=args.chunk_overlap,
            max_overlap=args.max_overlap,
            max_calls=args.max_calls,
            max_tokens=args.max_tokens,
            max_attempts=args.max_attempts,
            recall=recall,
            show_progress=args.progress,
        )
    except (KeyboardInterrupt, JudgeModelError) as exc:
        code, message = stopped(exc)
        err.print(f"{message}; what was made is in {args.out}, run again to resume")
        return code
    except JudgeError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}; what was made is in {args.out}, run "
                  "again to resume", soft_wrap=True)  # fmt: skip
        return JUDGE_UNAVAILABLE
    except (OSError, ValueError, TypeError, ImportError) as error:  # SampleError: ValueError
        err.print(f"[red]error:[/] {escape(str(error))}", soft_wrap=True)
        return USAGE_ERROR
    table = Table(title=f"generated {len(report.items)} of {args.n} items", title_justify="left")
    table.add_column("kind")
    table.add_column("attempts", justify="right")
    table.add_column("accepted", justify="right")
    for kind in KINDS:
        if report.attempts_by_kind[kind] or report.accepted_by_kind[kind]:
            table.add_row(
                kind, str(report.attempts_by_kind[kind]), str(report.accepted_by_kind[kind])
            )
    console.print(table)
    if report.resumed:
        console.print(f"{report.resumed} items were in {args.out} already (resumed)")
    reasons = ", ".join(f"{r} {report.rejected[r]}" for r in REASONS if report.rejected[r])
    console.print(f"rejected: {reasons or 'none'}")
    u = report.usage
    console.print(
        f"judge calls {u.calls}, prompt tokens {u.prompt_tokens}, completion tokens "
        f"{u.completion_tokens}, {report.elapsed_s:.1f} s; written to {args.out}"
    )
    if report.stopped == "budget":
        err.print("[yellow]stopped at the budget[/] (--max-calls / --max-tokens); run again "
                  "with a larger one to go on")  # fmt: skip
        return BUDGET_STOPPED
    if report.stopped == "attempts":
        err.print(f"[yellow]stopped after {report.attempts} attempts[/] (--max-attempts) with "
                  f"{len(report.items)} of {args.n} items")  # fmt: skip
        return GATE_FAILED
    return OK


def _lines(path: Path) -> int:
    """Items already in ``path`` (its non-empty lines)."""
    if not path.is_file():
        return 0
    with path.open("rb") as f:
        return sum(1 for line in f if line.strip())


def _dry_run(est: Estimate, done: int, console: Console) -> int:
    from rich.table import Table

    from ._exit import OK

    table = Table(title="dry run: estimated judge work (no judge called)", title_justify="left")
    table.add_column("")
    table.add_column("estimate", justify="right")
    table.add_row("chunks", str(est.chunks))
    table.add_row("items to make", f"{est.items} ({done} made already)")
    table.add_row("attempts", f"~{est.attempts}")
    table.add_row("judge calls", f"~{est.calls}")
    table.add_row("tokens", f"~{est.tokens}")
    console.print(table)
    console.print("an estimate: it assumes half the attempts are accepted")
    return OK
