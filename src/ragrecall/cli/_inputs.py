"""Arguments ``eval`` and ``claims`` share: the data, its columns and ids, the judge, the claims.

Adding the arguments imports nothing heavy (``eval --help`` and a usage error answer before
pydantic or langchain load); what reads the data or builds the judge imports it when called.
"""

from __future__ import annotations

import argparse
import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from .._core.errors import SampleError
from .._metrics.registry import metric_class

if TYPE_CHECKING:
    from rich.console import Console

    from .._core.schemas import Sample
    from .._io.files import DataRows
    from .._judge.resolve import JudgeLike
    from .._metrics.claims.decompose import ClaimCache

__all__ = [
    "CLAIM_MODES",
    "add_input_command",
    "add_judge_arguments",
    "check_writable",
    "claim_cache",
    "claim_mode",
    "count",
    "judge_spec",
    "parse_column_map",
    "read_input",
    "seconds",
]

CLAIM_MODES = ("atomic", "sentences")


def add_input_command(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    about: str,
    doc: str | None,
) -> argparse.ArgumentParser:
    """A command that reads a dataset and may call the judge, with the arguments for both."""
    p = commands.add_parser(
        name,
        help=about,
        description=(doc or "").replace("``", ""),  # the docstring, without its code markup
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("data", type=Path, help="a .jsonl/.json/.csv/.parquet file or a directory")
    add_judge_arguments(p)
    p.add_argument(
        "--claim-mode",
        choices=CLAIM_MODES,
        default=None,
        help="how a reference is split into claims: atomic (by the judge, the default) or "
        "sentences (by rule)",
    )
    p.add_argument(
        "--claims-store",
        type=Path,
        default=None,
        metavar="PATH",
        help="the SQLite claim store to read and fill (default: the user cache's, shared by "
        "every run on this machine); keep one in a repository to share claims",
    )
    p.add_argument(
        "--column-map",
        default=None,
        metavar="A=B,C=D",
        help="rename your columns to ours: 'gold=reference,ctx=retrieved_contexts' "
        "or a JSON object",
    )
    p.add_argument(
        "--id-column",
        default=None,
        metavar="NAME",
        help="the column that identifies a sample across runs (default: sample_id when "
        "present, else the question and reference)",
    )
    p.add_argument("--limit", type=int, default=None, help="read only the first N rows")
    return p


def add_judge_arguments(p: argparse.ArgumentParser) -> None:
    """The judge's flags (read back by ``judge_spec``): ``--judge``, ``--judge-url``,
    ``--judge-key-env``, ``--judge-factory``."""
    p.add_argument(
        "--judge", default=None, help="'local' (embedded judge, the default) or 'provider:model'"
    )
    p.add_argument(
        "--judge-url",
        metavar="URL",
        help="an OpenAI-compatible server (vLLM, llama.cpp, Ollama, LM Studio), e.g. "
        "http://localhost:11434/v1; --judge names its model ('openai:MODEL' or 'MODEL')",
    )
    p.add_argument(
        "--judge-key-env",
        metavar="NAME",
        help="with --judge-url: the environment variable holding its API key (default: no "
        "key is sent)",
    )
    p.add_argument(
        "--judge-factory",
        metavar="MODULE:CALLABLE",
        help="import MODULE and call CALLABLE() for the judge chat model (custom "
        "clients, test fakes); overrides --judge",
    )


def count(text: str) -> int:
    """A flag's count (``--max-calls``, ``--max-tokens``): a whole number, 0 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


def seconds(text: str) -> float:
    """A flag's duration (``--timeout``): a number of seconds above 0 (not inf or nan)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not 0 < value < math.inf:  # false for nan too
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0, not {text}")
    return value


def parse_column_map(text: str | None) -> dict[str, str] | None:
    """``"a=b,c=d"`` or a JSON object -> ``{"a": "b", "c": "d"}`` (your column -> our field)."""
    if not text:
        return None
    if text.lstrip().startswith("{"):
        from .._io.safe import loads

        try:
            value = loads(text)
        except json.JSONDecodeError as err:
            raise SampleError(f"--column-map: invalid JSON: {err}") from err
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise SampleError("--column-map: expected a JSON object of strings")
        return {str(k): v for k, v in value.items()}
    mapping: dict[str, str] = {}
    for pair in text.split(","):
        source, sep, target = pair.partition("=")
        if not sep or not source.strip() or not target.strip():
            raise SampleError(f"--column-map: expected 'column=field' pairs, got {pair!r}")
        mapping[source.strip()] = target.strip()
    return mapping


def read_input(args: argparse.Namespace, err: Console) -> list[Sample]:
    """Every sample of ``args.data``. Two rows with one ``sample_id`` are refused; rows that
    repeat a task are kept as separate samples and reported."""
    from rich.markup import escape

    from .._io.files import DataRows
    from .._io.samples import COLUMNS, iter_samples, repeated_tasks

    if args.limit is not None and args.limit < 0:
        raise SampleError("--limit must be >= 0")
    column_map = parse_column_map(args.column_map) or {}
    if args.id_column:
        column_map[args.id_column] = "sample_id"
    rows = DataRows(args.data, args.limit)
    if rows.skipped:
        err.print(f"note: {escape(rows.skipped_note())}", soft_wrap=True)
    samples = list(iter_samples(rows, column_map or None))
    if not samples:
        raise SampleError(f"{args.data}: no samples to score")
    unread = sorted(rows.columns - COLUMNS - set(column_map))
    if unread:
        hints = [_with_hint(name) for name in unread]
        err.print(f"note: columns not read: {escape(', '.join(hints))}", soft_wrap=True)
    groups = repeated_tasks(samples)
    explicit = [g for g in groups if samples[g[0]].sample_id is not None]
    if explicit:
        raise SampleError(
            f"{args.data}: {len(explicit)} sample ids appear on more than one row (first: "
            f"{samples[explicit[0][0]].sample_id!r} on rows {_rows(rows, explicit[0])}); "
            "ids must be unique"
        )
    if groups:
        extra = sum(len(g) - 1 for g in groups)
        err.print(
            f"note: {extra} rows repeat the question and reference of an earlier row (first: "
            f"rows {escape(_rows(rows, groups[0]))}); they are scored as separate samples, "
            "and `compare` will not pair them: give each row a sample_id (--id-column)",
            soft_wrap=True,
        )
    return samples


def check_needs(
    samples: Sequence[Sample], names: Sequence[str], source: object, given: Sequence[str] = ()
) -> None:
    """Refuse (SampleError) a run whose input has, on no row, a field a metric needs: a
    misspelt column would otherwise score every sample as if nothing were there. ``given``:
    fields that come from elsewhere (``reference_claims`` from ``--claims``)."""
    present: set[str] = set(given)
    for sample in samples:  # a column given, even empty (a retrieval of nothing), is there
        present |= sample.model_fields_set
    for name in names:
        for fields in metric_class(name).needs:
            if not present.intersection(fields):
                wanted = " or ".join(_spellings(f) for f in fields)
                raise SampleError(
                    f"{source}: no row has {wanted}, which {name} needs, so every sample would "
                    "be scored without it; name your column with --column-map (see the note "
                    "on columns not read above, if any)"
                )


def _spellings(field: str) -> str:
    from pydantic import AliasChoices

    from .._core.schemas import Sample

    alias = Sample.model_fields[field].validation_alias
    choices = alias.choices if isinstance(alias, AliasChoices) else []
    names = [field, *(str(a) for a in choices if a != field)]
    return names[0] + (f" ({', '.join(names[1:])})" if len(names) > 1 else "")


def _with_hint(column: str) -> str:
    import difflib

    from .._io.samples import COLUMNS

    close = difflib.get_close_matches(column, sorted(COLUMNS), n=1)
    return f"{column} (did you mean {close[0]}?)" if close else column


def _rows(rows: DataRows, indices: Sequence[int]) -> str:
    shown = [rows.locate(i) if len(rows.files) > 1 else str(i) for i in indices[:3]]
    return ", ".join(shown) + (", ..." if len(indices) > 3 else "")


def judge_spec(args: argparse.Namespace) -> JudgeLike:
    from .._judge.resolve import import_judge, judge_at

    if args.judge_factory:
        return import_judge(args.judge_factory)
    spec: str | None = args.judge
    if args.judge_url:
        model = (spec or "").partition(":")[2] or spec
        return judge_at(args.judge_url, model, args.judge_key_env)
    return spec


def claim_cache(args: argparse.Namespace) -> ClaimCache | None:
    """The claim store ``--claims-store`` names (None: the default one)."""
    if not args.claims_store:
        return None
    import sqlite3

    from .._metrics.claims.decompose import ClaimCache

    try:
        return ClaimCache(args.claims_store)
    except sqlite3.Error as err:
        raise SampleError(f"--claims-store {args.claims_store}: {err}") from err


def claim_mode(args: argparse.Namespace) -> Literal["atomic", "sentences"]:
    return "sentences" if args.claim_mode == "sentences" else "atomic"


def check_writable(path: Path, flag: str) -> None:
    """Fail before any judge call if ``path`` cannot be written (not after the run), or is
    a symbolic link: an output is never written through a link into its target."""
    if path.is_symlink():
        raise SampleError(
            f"{flag} {path}: a symbolic link (to {os.readlink(path)}); outputs are not written "
            "through links: give the file itself, or another path"
        )
    existed = path.exists()
    try:
        with path.open("a", encoding="utf-8"):
            pass
    except OSError as err:
        raise SampleError(f"{flag} {path}: cannot be written ({err.strerror or err})") from err
    if not existed:
        path.unlink()
