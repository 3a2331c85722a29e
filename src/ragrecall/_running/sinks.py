"""Where logged recall goes: JSONL files, SQLite, a callable, or LangSmith feedback.

A sink has ``write(record)`` and ``close()``. A record is the ``Record`` of a run's results
file (``ragrecall.engines.Record``): one per sample, every metric's result under ``results``,
plus the live log's ``run_id``, ``timestamp`` and ``extra``; an unscorable result is written
like any other. A ``JsonlSink``'s file is a results file: ``ragrecall compare``, ``review`` and
``calibrate`` and ``read_records`` read it as they read ``eval --out``'s.

``RecallRecord`` is the older shape (one record per metric, the score at ``result.score``),
kept to read lines written before; ``RecallRecord.views(record)`` gives a record in it.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, Field, model_validator

from .._core.extras import requires
from .._core.schemas import Chunk, RecallResult
from .store import Record

__all__ = ["CallableSink", "JsonlSink", "LangSmithSink", "RecallRecord", "SQLiteSink", "Sink"]


def _now() -> datetime:
    return datetime.now(timezone.utc)


class RecallRecord(BaseModel):
    """One metric's result for one retrieval: the shape logs had before they wrote ``Record``
    (deprecated for new code: read logs with ``ragrecall.engines.read_records``)."""

    timestamp: datetime = Field(default_factory=_now)
    run_id: str | None = Field(None, description="The host framework's run or query id.")
    query: str | None = None
    reference: str | None = None
    chunks: list[Chunk] = Field(default_factory=list)
    result: RecallResult
    extra: dict[str, Any] = Field(default_factory=dict, description="E.g. parent_run_id.")

    @model_validator(mode="before")
    @classmethod
    def _from_a_record_line(cls, value: Any) -> Any:
        """A results-file line of one metric reads as its view (older readers keep working)."""
        if not isinstance(value, dict) or "results" not in value or "result" in value:
            return value
        views = cls.views(Record.from_json(value))
        if len(views) != 1:
            raise ValueError(f"a record of {len(views)} metrics: read it with read_records")
        return dict(views[0])

    @classmethod
    def views(cls, record: Record) -> list[RecallRecord]:
        """``record`` in this older shape: one per metric."""
        return [
            cls(
                timestamp=record.timestamp or _now(),
                run_id=record.run_id,
                query=record.query,
                reference=record.reference,
                chunks=record.chunks,
                result=result,
                extra=record.extra,
            )
            for result in record.results.values()
        ]


class Sink(Protocol):
    def write(self, record: Record) -> None: ...

    def close(self) -> None: ...


class JsonlSink:
    """Appends one line per record (a results file's line), flushed and fsynced, so a crash
    loses no record; a line torn by a crash is cut away when the sink opens the file.

    Read back (``read_records``), a query logged several times is its latest line, as a
    sample scored again in a results file is; every line stays in the file."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        _cut_torn_tail(self.path)

    def write(self, record: Record) -> None:
        line = record.to_json() + "\n"
        with self._lock, self.path.open("a", encoding="utf-8") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())

    def close(self) -> None:
        pass


class SQLiteSink:
    """One row per record: ``timestamp``, ``run_id``, ``key``, ``query`` as columns and the
    record itself in ``record``, as its results-file line (JSON: a score is
    ``json_extract(record, '$.results.context_recall.score')``)."""

    def __init__(self, path: str | Path, table: str = "recall"):
        if not table.isidentifier():
            raise ValueError(f"table must be an identifier, not {table!r}")
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.table = table
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
        self._db.execute(
            f"CREATE TABLE IF NOT EXISTS {table} (id INTEGER PRIMARY KEY, timestamp TEXT, "
            "run_id TEXT, key TEXT, query TEXT, record TEXT)"
        )
        columns = {row[1] for row in self._db.execute(f"PRAGMA table_info({table})")}
        if "key" not in columns:
            self._db.close()
            raise ValueError(
                f"table {table!r} of {path} holds records of the older shape (a row per "
                "metric); pass another table= for this logger's records"
            )
        self._db.commit()

    def write(self, record: Record) -> None:
        when = None if record.timestamp is None else record.timestamp.isoformat()
        row = (when, record.run_id, record.key, record.query, record.to_json())
        with self._lock:
            self._db.execute(
                f"INSERT INTO {self.table} (timestamp, run_id, key, query, record) "
                "VALUES (?, ?, ?, ?, ?)",
                row,
            )
            self._db.commit()

    def records(self) -> list[Record]:
        """Every stored record, oldest first."""
        with self._lock:
            rows = self._db.execute(f"SELECT record FROM {self.table} ORDER BY id").fetchall()
        return [Record.from_json(json.loads(row[0])) for row in rows]

    def close(self) -> None:
        with self._lock:
            self._db.close()


class CallableSink:
    """Hands each record to ``fn``."""

    def __init__(self, fn: Callable[[Record], Any]):
        self.fn = fn

    def write(self, record: Record) -> None:
        self.fn(record)

    def close(self) -> None:
        pass


class LangSmithSink:
    """Feedback on the LangSmith run (``record.run_id``), one per metric: the score, and the
    missing claims as the comment (an unscorable result's reason instead). ``key`` names the
    feedback of a logger of one metric; with several, each is named after its metric. A
    record without a run id is refused."""

    def __init__(self, client: Any = None, key: str | None = None):
        if client is None:
            with requires("LangSmithSink"):
                from langsmith import Client

            client = Client()
        self.client = client
        self.key = key

    def write(self, record: Record) -> None:
        if record.run_id is None:
            raise ValueError("LangSmith feedback needs the record's run_id")
        for name, r in record.results.items():
            comment = r.reason if r.status == "unscorable" else _missing_comment(r)
            key = self.key if self.key and len(record.results) == 1 else name
            self.client.create_feedback(
                run_id=record.run_id, key=key, score=r.score, comment=comment
            )

    def close(self) -> None:
        pass


def _missing_comment(result: RecallResult) -> str:
    if not result.missing:
        return "all claims supported"
    return "missing: " + json.dumps(result.missing, ensure_ascii=False)


def _cut_torn_tail(path: Path) -> None:
    """Cut a last line left without its newline by a crash, so the next line starts clean."""
    if not path.is_file() or path.stat().st_size == 0:
        return
    with path.open("r+b") as f:
        size = f.seek(0, os.SEEK_END)
        end = size
        while end > 0:
            start = max(0, end - 65536)
            f.seek(start)
            chunk = f.read(end - start)
            cut = chunk.rfind(b"\n")
            if cut >= 0:
                end = start + cut + 1
                break
            end = start
        if end < size:
            f.truncate(end)
            f.flush()
            os.fsync(f.fileno())
