"""An append-only JSONL store of finished samples: nothing lost on a crash, resumable.

One line per sample, written as soon as the sample finishes (write, flush, fsync)::

    {"key": "<Sample.key(): the task>", "occurrence": 1, "content": "<Sample.content_key()>",
     "index": 3, "sample": {...},
     "results": {"context_recall": {...the metric's result, with "runs" under --repeats...}}}

A sample is ``(key, occurrence)``: the task, and which of the input's rows with that task it
is (1 unless the input repeats a task). Each result is read back as its metric's own result
type (the metric registry), so a record read from the file equals the one written, field for
field.

A kill can only tear the last line; ``ResultsFile.open`` cuts a torn last line away before
appending, so the file never holds a half-written line. Resuming skips the samples whose
content is unchanged; a changed row is scored again and its new line replaces the old one when
the file is read (the last line of a sample wins), so nothing is counted twice. One concern:
the results file, its records and its lock.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, Any

import filelock

from .._core.errors import SampleError
from .._core.schemas import Chunk, RecallResult, Sample
from .._io.safe import lines, loads, regular_file
from .._io.samples import SampleId
from .._metrics.registry import result_type

__all__ = ["Record", "ResultsFile", "SampleId", "read_file", "read_log"]


@dataclass
class Record:
    """One finished sample and its results, as every engine hands it to ``on_record`` and as
    ``read_records`` reads it back from a run's output (a results file, a Ray run's folder).

    - ``key``: the sample's task (``Sample.key()``), the same whichever retriever answered
      it: runs of two retrievers pair on it.
    - ``occurrence``: which of the input's rows with this task it is (1 unless the input
      repeats a task); ``id`` is ``(key, occurrence)``, a sample's identity across runs.
    - ``content``: the digest of the sample's content (``Sample.content_key()``); a resumed
      run scores a sample again when it changed.
    - ``index``: the sample's row in the input (-1 where the input's order is not known: a
      dataset that Ray read).
    - ``sample``: the sample as scored.
    - ``results``: per metric name, the metric's own result (``RecallResult`` or its
      subclass: score, status, reason, claims, verdicts, usage, judge; ``runs`` with repeats).
    - ``timestamp``: when it was scored (UTC; None from Ray and in older files).
    - ``run_id``, ``extra``: what a live log adds (``RecallLogger``: the host's run id, e.g.
      ``parent_run_id``); None and empty in a run's results file, and left out of its lines.

    ``score(metric)`` is the sample's score for ``metric``, or None. ``query``, ``reference``,
    ``chunks`` and ``result`` read as the older ``RecallRecord`` did (``result``: the one
    result of a record of one metric).
    """

    key: str
    index: int
    sample: Sample
    results: dict[str, RecallResult]
    occurrence: int = 1
    content: str = ""
    run_id: str | None = None
    timestamp: datetime | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> SampleId:
        return (self.key, self.occurrence)

    def to_json(self) -> str:
        results = {name: r.model_dump(mode="json") for name, r in self.results.items()}
        value: dict[str, Any] = {
            "key": self.key,
            "occurrence": self.occurrence,
            "content": self.content,
            "index": self.index,
            "sample": self.sample.model_dump(mode="json", exclude_none=True),
            "results": results,
        }
        if self.run_id is not None:
            value["run_id"] = self.run_id
        if self.timestamp is not None:
            value["timestamp"] = self.timestamp.isoformat()
        if self.extra:
            value["extra"] = self.extra
        return json.dumps(value, ensure_ascii=False)

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> Record:
        legacy_runs = value.get("runs") or {}  # files written before runs moved into results
        results = {}
        for name, raw in value["results"].items():
            if name in legacy_runs and not raw.get("runs"):
                raw = {**raw, "runs": legacy_runs[name]}
            results[name] = result_type(name).model_validate(raw)
        sample = Sample.model_validate(value["sample"])
        legacy = "occurrence" not in value  # written when the key digested the content
        return cls(
            key=sample.key() if legacy else str(value["key"]),
            index=int(value["index"]),
            sample=sample,
            results=results,
            occurrence=int(value.get("occurrence", 1)),
            content=str(value.get("content") or sample.content_key()),
            run_id=None if value.get("run_id") is None else str(value["run_id"]),
            timestamp=_when(value.get("timestamp")),
            extra=dict(value.get("extra") or {}),
        )

    def score(self, metric: str) -> float | None:
        """The sample's score for ``metric`` (the mean over its scored runs, with repeats)."""
        result = self.results.get(metric)
        return None if result is None else result.score

    @property
    def query(self) -> str | None:
        return self.sample.user_input

    @property
    def reference(self) -> str | None:
        return self.sample.reference

    @property
    def chunks(self) -> list[Chunk]:
        return self.sample.retrieved_contexts

    @property
    def result(self) -> RecallResult:
        """The one result of a record of one metric (``results[name]`` where it has more)."""
        if len(self.results) != 1:
            raise ValueError(f"this record holds {sorted(self.results)}: read results[name]")
        return next(iter(self.results.values()))


def _when(value: Any) -> datetime | None:
    return None if value is None else datetime.fromisoformat(str(value))


def read_file(path: str | Path) -> list[Record]:
    """The records of a results file, one per sample: a sample written twice (scored again
    after its row changed) is its last line. A torn last line is ignored, not repaired."""
    latest: dict[SampleId, Record] = {}
    for _, record in _scan(Path(path)):
        if record is not None:
            latest.pop(record.id, None)
            latest[record.id] = record
    return list(latest.values())


def read_log(path: str | Path) -> list[tuple[int, Record]]:
    """Every record and its line, none replaced (a query logged twice is two events)."""
    return [(n, r) for n, (_, r) in enumerate(_scan(Path(path)), 1) if r is not None]


def _scan(path: Path) -> Iterator[tuple[int, Record | None]]:
    """Each complete line's end offset and record (None for a blank line). A last line without
    its newline is a torn write (the newline is the last byte written) and is left out."""
    regular_file(path, "results file")
    with path.open("rb") as f:
        end = 0
        for number, line in lines(f, path):
            if not line.endswith(b"\n"):
                return
            end += len(line)
            if not line.strip():
                yield end, None
                continue
            try:
                record = Record.from_json(loads(line))
            except (ValueError, KeyError, TypeError, AttributeError) as err:
                problem = f"missing {err}" if isinstance(err, KeyError) else str(err)
                message = f"not a ragrecall results line: {problem}"
                raise SampleError(message, file=str(path), line=number) from err
            yield end, record


class ResultsFile:
    """Append records to ``path`` durably; on open, repair a torn tail and note, per sample
    already there, the content it was scored with (``done``).

    Use as a context manager::

        with ResultsFile.open("results.jsonl", metrics=["context_recall"]) as out:
            if out.done.get(sample_id) != sample.content_key(): ...
            out.append(record)
    """

    repaired = False  # a torn last line was cut away on open

    def __init__(
        self, path: Path, done: dict[SampleId, str], handle: IO[bytes], lock: filelock.FileLock
    ):
        self.path, self.done = path, done
        self._handle, self._lock = handle, lock

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        metrics: Sequence[str] | None = None,
        repeats: int = 1,
    ) -> ResultsFile:
        """Open for appending, as its only writer. Raises SampleError when another process
        writes to it, or when it holds other metrics or repeats than this run asks for
        (resuming would mix two configurations)."""
        path = Path(path)
        regular_file(path, "results file")
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = filelock.FileLock(f"{path}.lock", timeout=0)
        try:
            lock.acquire()
        except filelock.Timeout:
            raise SampleError(
                f"{path} is being written by another process (its lock {path}.lock is held); "
                "wait for it to finish or write to another --out file"
            ) from None
        except OSError as err:  # a link planted there (not followed), a folder, no access
            raise SampleError(
                f"{path}.lock, the results file's lock, cannot be used ({err.strerror or err}; "
                "a link there is not followed): remove it, or write to another --out file"
            ) from err
        try:
            return cls._open(path, lock, metrics, repeats)
        except BaseException:
            lock.release()
            raise

    @classmethod
    def _open(
        cls, path: Path, lock: filelock.FileLock, metrics: Sequence[str] | None, repeats: int
    ) -> ResultsFile:
        done: dict[SampleId, str] = {}
        repaired = False
        if path.exists():
            good = 0
            for end, record in _scan(path):
                good = end
                if record is None:
                    continue
                if not done:
                    _check_compatible(path, record, metrics, repeats)
                done[record.id] = record.content
            if good < path.stat().st_size:
                with path.open("r+b") as f:
                    f.truncate(good)
                    f.flush()
                    os.fsync(f.fileno())
                repaired = True
        out = cls(path, done, path.open("ab"), lock)
        out.repaired = repaired
        return out

    def append(self, record: Record) -> None:
        """Write one line and make it durable before returning (a sample already there with
        the same content is not written again)."""
        if self.done.get(record.id) == record.content:
            return
        try:
            self._handle.write((record.to_json() + "\n").encode("utf-8"))
            self._handle.flush()
            os.fsync(self._handle.fileno())
        except OSError as err:  # a full disk: say which file (a torn line is cut on resume)
            raise OSError(err.errno, err.strerror, str(self.path)) from err
        self.done[record.id] = record.content

    def close(self) -> None:
        try:
            self._handle.close()
        except OSError as err:  # what a failed append left in the buffer: name the file
            raise OSError(err.errno, err.strerror, str(self.path)) from err
        finally:
            self._lock.release()

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
