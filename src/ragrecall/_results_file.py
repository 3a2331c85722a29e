"""An append-only JSONL store of finished samples: nothing lost on a crash, resumable.

One line per sample, written as soon as the sample finishes (write, flush, fsync)::

    {"key": "<Sample.key()>", "index": 3, "sample": {...},
     "results": {"context_recall": {...the metric's result, with "runs" under --repeats...}}}

Each result is read back as its metric's own result type (the metric registry), so a record
read from the file equals the one written, field for field.

A kill can only tear the last line; ``ResultsFile.open`` cuts a torn last line away before
appending, so the file never holds a half-written line, and the keys already present are
skipped on resume, so it never holds a duplicate.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ._errors import SampleError
from ._metrics.registry import result_type
from ._schemas import RecallResult, Sample

__all__ = ["Record", "ResultsFile", "read_records"]


@dataclass
class Record:
    """One finished sample: its key and input row index, the sample, and results per metric."""

    key: str
    index: int
    sample: Sample
    results: dict[str, RecallResult]

    def to_json(self) -> str:
        results = {name: r.model_dump(mode="json") for name, r in self.results.items()}
        value: dict[str, Any] = {
            "key": self.key,
            "index": self.index,
            "sample": self.sample.model_dump(mode="json", exclude_none=True),
            "results": results,
        }
        return json.dumps(value, ensure_ascii=False)

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> Record:
        legacy_runs = value.get("runs") or {}  # files written before runs moved into results
        results = {}
        for name, raw in value["results"].items():
            if name in legacy_runs and not raw.get("runs"):
                raw = {**raw, "runs": legacy_runs[name]}
            results[name] = result_type(name).model_validate(raw)
        return cls(
            key=str(value["key"]),
            index=int(value["index"]),
            sample=Sample.model_validate(value["sample"]),
            results=results,
        )

    def score(self, metric: str) -> float | None:
        """The sample's score for ``metric`` (the mean over its scored runs, with repeats)."""
        result = self.results.get(metric)
        return None if result is None else result.score


def read_records(path: str | Path) -> list[Record]:
    """Every complete record of a results file (a torn last line is ignored, not repaired)."""
    return [record for _, record in _scan(Path(path)) if record is not None]


def _scan(path: Path) -> Iterator[tuple[int, Record | None]]:
    """Each complete line's end offset and record (None for a blank line). A last line without
    its newline is a torn write (the newline is the last byte written) and is left out."""
    with path.open("rb") as f:
        end = 0
        for number, line in enumerate(f, start=1):
            if not line.endswith(b"\n"):
                return
            end += len(line)
            if not line.strip():
                yield end, None
                continue
            try:
                record = Record.from_json(json.loads(line))
            except (ValueError, KeyError, TypeError) as err:
                raise SampleError(f"{path}:{number}: not a ragrecall results line: {err}") from err
            yield end, record


class ResultsFile:
    """Append records to ``path`` durably; on open, repair a torn tail and note the keys done
    (only the keys: ``on_record`` sees the records as they are read).

    Use as a context manager::

        with ResultsFile.open("results.jsonl", metrics=["context_recall"]) as out:
            if sample.key() not in out.done: ...
            out.append(record)
    """

    def __init__(self, path: Path, done: set[str], handle: IO[bytes]):
        self.path = path
        self.done = done
        self.repaired = False
        self._handle = handle

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        metrics: Sequence[str] | None = None,
        repeats: int = 1,
        on_record: Callable[[Record], None] | None = None,
    ) -> ResultsFile:
        """Open for appending; ``on_record`` sees each record already there (one read of the
        file serves both). Raises SampleError when the file holds other metrics or repeats
        than this run asks for (resuming would mix two configurations)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        done: set[str] = set()
        repaired = False
        if path.exists():
            good = 0
            for end, record in _scan(path):
                good = end
                if record is None:
                    continue
                if not done:
                    _check_compatible(path, record, metrics, repeats)
                done.add(record.key)
                if on_record is not None:
                    on_record(record)
            if good < path.stat().st_size:
                with path.open("r+b") as f:
                    f.truncate(good)
                    f.flush()
                    os.fsync(f.fileno())
                repaired = True
        out = cls(path, done, path.open("ab"))
        out.repaired = repaired
        return out

    def append(self, record: Record) -> None:
        """Write one line and make it durable before returning."""
        if record.key in self.done:
            return
        self._handle.write((record.to_json() + "\n").encode("utf-8"))
        self._handle.flush()
        os.fsync(self._handle.fileno())
        self.done.add(record.key)

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> ResultsFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_compatible(
    path: Path, first: Record, metrics: Sequence[str] | None, repeats: int
) -> None:
    if metrics is not None and set(first.results) != set(metrics):
        raise SampleError(
            f"{path} holds results for {sorted(first.results)}, not {sorted(metrics)}; "
            "resume with the same --metric options or write to another --out file"
        )
    had = max((len(r.runs) for r in first.results.values()), default=1) or 1
    if had != repeats:
        raise SampleError(
            f"{path} was written with --repeats {had}, not {repeats}; resume with the same "
            "options or write to another --out file"
        )
