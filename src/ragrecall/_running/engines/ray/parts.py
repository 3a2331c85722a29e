"""The results directory of a Ray run: Parquet parts that each worker writes as its samples
finish (every ``rows`` samples or ``seconds``, whichever comes first), each part whole or
absent (written aside, fsynced, renamed), and the samples they hold, read back to resume
(``done_samples``) and as records (``read_parts``). Reading needs pyarrow, not Ray.

Parts are written by the scoring actors themselves, not by a ``write_parquet`` stage at the
end of the pipeline: Ray Data hands an actor's output on only when the whole batch is
scored, and its write tasks ask for CPU that the actor pools hold until they finish, so a
killed run lost everything scored but not yet written.
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ragrecall._core.errors import SampleError
from ragrecall._running.store import Record

from .rows import RESULT_SCHEMA, records

__all__ = [
    "FLUSH_ROWS",
    "FLUSH_SECONDS",
    "Done",
    "PartWriter",
    "done_samples",
    "parts",
    "read_parts",
]

FLUSH_ROWS = 16  # samples a worker holds at most before it writes them out
FLUSH_SECONDS = 2.0  # seconds a finished sample waits at most to be written out
Done = dict[tuple[str, int], str]  # (key, occurrence) -> content digest


def parts(out: Path) -> list[Path]:
    return sorted(p for p in out.rglob("*.parquet") if p.is_file())


def write_part(out: Path, rows: Sequence[dict[str, Any]]) -> Path:
    """``rows`` as one new part of ``out``, whole or not at all."""
    name = f"part-{uuid.uuid4().hex}"
    aside, final = out / f".{name}.tmp", out / f"{name}.parquet"
    table = pa.Table.from_pylist(list(rows), RESULT_SCHEMA)
    with open(aside, "wb") as sink:
        pq.write_table(table, sink)
        sink.flush()
        os.fsync(sink.fileno())
    os.replace(aside, final)
    return final


def done_samples(out: str | Path, metrics: Sequence[str], *, remove_broken: bool = True) -> Done:
    """The samples ``out`` already holds with every metric, by id -> content digest. A part
    that cannot be read (a write cut short) is removed, with a warning: its samples are scored
    again. Raises SampleError when ``out`` holds other metrics than ``metrics``."""
    out = Path(out)
    if not out.exists():
        return {}
    seen: dict[tuple[str, int, str], set[str]] = {}
    for part in parts(out):
        try:
            table = pq.read_table(part, columns=["key", "occurrence", "content", "metric"])
        except (OSError, pa.ArrowInvalid) as err:
            if remove_broken:
                warnings.warn(f"{part}: unreadable results part removed ({err})", stacklevel=2)
                os.remove(part)
            continue
        for row in table.to_pylist():
            if row["metric"] not in metrics:
                raise SampleError(
                    f"{out} holds results for {row['metric']!r}, not only {sorted(metrics)}; "
                    "resume with the same metrics or write to another output directory"
                )
            seen.setdefault((row["key"], row["occurrence"], row["content"]), set()).add(
                row["metric"]
            )
    return {(k, o): c for (k, o, c), names in seen.items() if len(names) == len(metrics)}


def read_parts(out: Path) -> list[Record]:
    """The records of a Ray run's output directory, one per sample, in input order. A sample
    scored again after its row changed (on resume) is the one of the newest part. A part that
    cannot be read is left out with a warning (a run resuming from ``out`` removes it)."""
    found = parts(out)
    if not found:
        raise SampleError(f"{out} holds no results parts (the *.parquet files of a Ray run)")
    latest: dict[tuple[str, int], Record] = {}
    for part in sorted(found, key=lambda p: (p.stat().st_mtime_ns, p.name)):
        try:
            rows = pq.read_table(part).to_pylist()
        except (OSError, pa.ArrowInvalid) as err:
            warnings.warn(f"{part}: unreadable results part left out ({err})", stacklevel=2)
            continue
        try:  # a sample's rows, one per metric, are written together in one part
            for record in records(rows, len({row["metric"] for row in rows})):
                latest[record.id] = record
        except (ValueError, KeyError, TypeError) as err:
            problem = f"missing {err}" if isinstance(err, KeyError) else str(err)
            message = f"not a ragrecall results part: {problem}"
            raise SampleError(message, file=str(part)) from err
    return sorted(latest.values(), key=lambda r: (r.index, r.key, r.occurrence))


class PartWriter:
    """A worker's finished samples, written to ``out`` as a part every ``rows`` samples or
    ``seconds`` after the oldest unwritten one finished, whichever comes first (a timer on
    the worker's event loop), and whatever is left when its batch ends."""

    def __init__(self, out: Path, rows: int, seconds: float):
        self.out, self.rows, self.seconds = out, max(1, rows), max(0.0, seconds)
        self.pending: list[dict[str, Any]] = []
        self.samples = 0
        self.since = 0.0
        self.later: asyncio.TimerHandle | None = None

    def add(self, rows: Iterable[dict[str, Any]]) -> None:
        if not self.pending:
            self.since = time.monotonic()
        self.pending.extend(rows)
        self.samples += 1
        if self.samples >= self.rows or time.monotonic() - self.since >= self.seconds:
            self.flush()
        elif self.later is None:
            self.later = asyncio.get_running_loop().call_later(self.seconds, self.flush)

    def flush(self) -> None:
        if self.later is not None:
            self.later.cancel()
            self.later = None
        if self.pending:
            write_part(self.out, self.pending)
        self.pending, self.samples = [], 0
