"""A ``generate`` run's output files: each row appended as a JSON line (flushed and fsynced),
and the rows of an earlier run read back to resume it. A row's ``generation`` field holds the
settings it was made with (``FORMAT`` the layout's version), the attempt and its usage.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from .._core.errors import SampleError
from .._io.safe import lines, loads, regular_file

__all__ = ["FORMAT", "Appender", "read_rows"]

FORMAT = 1  # the version of the rows' layout, in their "generation" field


class Appender:
    """``with Appender(path) as write: write(row)``: each row appended as a JSON line,
    flushed and fsynced; no path, no file."""

    def __init__(self, path: str | Path | None):
        self.path = Path(path) if path else None
        self.handle: IO[str] | None = None

    def __enter__(self) -> Any:
        if self.path is not None:
            self.handle = self.path.open("a", encoding="utf-8")
        return self.write

    def write(self, row: Mapping[str, Any]) -> None:
        if self.handle is None:
            return
        self.handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        self.handle.flush()
        os.fsync(self.handle.fileno())

    def __exit__(self, *exc: object) -> None:
        if self.handle is not None:
            self.handle.close()


def read_rows(path: Path, settings: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The rows a previous run wrote to ``path`` (none if it does not exist). A torn last
    line (a kill mid-write) is cut away; rows made with other ``settings`` are refused."""
    if not path.exists():
        return []
    regular_file(path, "output file")
    rows: list[dict[str, Any]] = []
    torn_at: int | None = None
    with path.open("rb") as f:
        for number, raw in lines(f, path):
            if torn_at is not None:
                raise SampleError("not a JSON object", file=str(path), line=torn_at)
            if not raw.strip():
                continue
            try:
                row = loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError):
                if raw.endswith(b"\n"):
                    raise SampleError("not a JSON object", file=str(path), line=number) from None
                torn_at = number
                continue
            made = row.get("generation") if isinstance(row, dict) else None
            if not isinstance(made, dict) or not isinstance(made.get("attempt"), int):
                raise SampleError(
                    "not a row of `ragrecall generate` (no generation.attempt)",
                    file=str(path),
                    line=number,
                    field="generation",
                )
            if settings is not None:
                differs = sorted(k for k, v in settings.items() if made.get(k) != v)
                if differs:
                    raise SampleError(
                        f"made with other settings ({', '.join(differs)}); use another output "
                        "file, or the same settings to resume",
                        file=str(path),
                        line=number,
                        field="generation",
                    )
            rows.append(row)
    if torn_at is not None:  # cut the torn line: the next row starts on a line of its own
        data = path.read_bytes()
        path.write_bytes(data[: data.rstrip(b"\n").rfind(b"\n") + 1] if b"\n" in data else b"")
    return rows
