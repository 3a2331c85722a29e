"""Where logged recall goes: JSONL files, SQLite, a callable, or LangSmith feedback.

A sink has ``write(record)`` and ``close()``. Every record carries the query, the reference,
the chunks and the full result; an unscorable result is written like any other.
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

from pydantic import BaseModel, Field

from .._core.extras import requires
from .._core.schemas import Chunk, RecallResult

__all__ = ["CallableSink", "JsonlSink", "LangSmithSink", "RecallRecord", "SQLiteSink", "Sink"]


def _now() -> datetime:
    return datetime.now(timezone.utc)


class RecallRecord(BaseModel):
    """One scored (or unscorable) retrieval."""

    timestamp: datetime = Field(default_factory=_now)
    run_id: str | None = Field(None, description="The host framework's run or query id.")
    query: str | None = None
    reference: str | None = None
    chunks: list[Chunk] = Field(default_factory=list)
    result: RecallResult
    extra: dict[str, Any] = Field(default_factory=dict, description="E.g. parent_run_id.")


class Sink(Protocol):
    def write(self, record: RecallRecord) -> None: ...

    def close(self) -> None: ...


class JsonlSink:
    """Appends one JSON line per record, flushed and fsynced, so a crash loses no record."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def write(self, record: RecallRecord) -> None:
        line = record.model_dump_json() + "\n"
        with self._lock, self.path.open("a", encoding="utf-8") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())

    def close(self) -> None:
        pass


class SQLiteSink:
    """One row per record: queryable columns plus the whole record as JSON."""

    def __init__(self, path: str | Path, table: str = "recall"):
        if not table.isidentifier():
            raise ValueError(f"table must be an identifier, not {table!r}")
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.table = table
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
        self._db.execute(
            f"CREATE TABLE IF NOT EXISTS {table} (id INTEGER PRIMARY KEY, timestamp TEXT, "
            "run_id TEXT, metric TEXT, query TEXT, score REAL, status TEXT, reason TEXT, "
            "record TEXT)"
        )
        self._db.commit()

    def write(self, record: RecallRecord) -> None:
        r = record.result
        row = (
            record.timestamp.isoformat(),
            record.run_id,
            r.metric,
            record.query,
            r.score,
            r.status,
            r.reason,
            record.model_dump_json(),
        )
        with self._lock:
            self._db.execute(
                f"INSERT INTO {self.table} (timestamp, run_id, metric, query, score, status, "
                "reason, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                row,
            )
            self._db.commit()

    def records(self) -> list[RecallRecord]:
        """Every stored record, oldest first."""
        with self._lock:
            rows = self._db.execute(f"SELECT record FROM {self.table} ORDER BY id").fetchall()
        return [RecallRecord.model_validate_json(row[0]) for row in rows]

    def close(self) -> None:
        with self._lock:
            self._db.close()


class CallableSink:
    """Hands each record to ``fn``."""

    def __init__(self, fn: Callable[[RecallRecord], Any]):
        self.fn = fn

    def write(self, record: RecallRecord) -> None:
        self.fn(record)

    def close(self) -> None:
        pass


class LangSmithSink:
    """Feedback on the LangSmith run (``record.run_id``): the score, and the missing claims as
    the comment. Records without a run id or an unscorable result log the reason instead."""

    def __init__(self, client: Any = None, key: str | None = None):
        if client is None:
            with requires("LangSmithSink"):
                from langsmith import Client

            client = Client()
        self.client = client
        self.key = key

    def write(self, record: RecallRecord) -> None:
        if record.run_id is None:
            raise ValueError("LangSmith feedback needs the record's run_id")
        r = record.result
        comment = r.reason if r.status == "unscorable" else _missing_comment(r)
        self.client.create_feedback(
            run_id=record.run_id, key=self.key or r.metric, score=r.score, comment=comment
        )

    def close(self) -> None:
        pass


def _missing_comment(result: RecallResult) -> str:
    if not result.missing:
        return "all claims supported"
    return "missing: " + json.dumps(result.missing, ensure_ascii=False)
