"""Dataset files (JSONL, JSON, CSV, Parquet) and directories of them, read as rows.

Each row comes with the line it starts on, so that a bad row, like every read error (bytes
that are not UTF-8, invalid JSON, an empty ``.json``), is named by file and line.
"""

from __future__ import annotations

import csv
import errno
import json
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .._core.errors import SampleError
from .._core.extras import requires
from .safe import lines, loads, lone_surrogate

__all__ = ["SUFFIXES", "DataRows", "read_file"]

SUFFIXES = (".jsonl", ".json", ".csv", ".parquet")


def read_file(path: Path) -> Iterator[tuple[int | None, Any]]:
    """Each row of a file, with the line it starts on (None for Parquet, which has none)."""
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise SampleError("expected .jsonl, .json, .csv or .parquet", file=str(path))
    try:
        if suffix == ".jsonl":
            yield from _jsonl(path)
        elif suffix == ".json":
            yield from _json(path)
        elif suffix == ".csv":
            yield from _csv(path)
        else:
            yield from ((None, row) for row in _parquet(path))
    except UnicodeDecodeError as err:
        line, byte = _first_bad_byte(path)
        raise SampleError(
            f"not UTF-8 (byte {byte:#04x}: {err.reason}); save the file as UTF-8",
            file=str(path),
            line=line,
        ) from err


def _jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    with path.open("rb") as f:
        for number, raw in lines(f, path):
            line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            if not line.strip():
                continue
            try:
                value = loads(line)
            except json.JSONDecodeError as err:
                raise SampleError(
                    f"invalid JSON: {err.msg} (column {err.colno})", file=str(path), line=number
                ) from err
            _check_surrogates(line, path, number)
            yield number, value


def _json(path: Path) -> Iterator[tuple[int | None, Any]]:
    text = path.read_bytes().decode("utf-8-sig")
    if not text.strip():
        raise SampleError("empty file; expected a JSON array of samples", file=str(path), line=1)
    try:
        value = loads(text)
    except json.JSONDecodeError as err:
        raise SampleError(
            f"invalid JSON: {err.msg} (column {err.colno})", file=str(path), line=err.lineno
        ) from err
    _check_surrogates(text, path, 1)
    if isinstance(value, list):
        yield from ((None, item) for item in value)  # named by row: items share lines
    else:
        yield 1, value


def _check_surrogates(text: str, path: Path, first: int) -> None:
    """Refuse JSON ``text`` (from line ``first`` of ``path``) that escapes half a UTF-16 pair
    alone: no file can hold it as UTF-8, so every output would fail later, far from here."""
    at = lone_surrogate(text) if "\\" in text else None
    if at is not None:
        line = first + text.count("\n", 0, at)
        column = at - text.rfind("\n", 0, at)
        escape = text[at : text.index("u", at) + 5]
        raise SampleError(
            f"{escape} (column {column}) is half of a UTF-16 surrogate pair, alone: not text; "
            "remove it, or write the whole character",
            file=str(path),
            line=line,
        )


def _csv(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with path.open(encoding="utf-8-sig", newline="") as f:  # a BOM is not a column name
        lines = _Lines(f)
        reader = csv.reader(lines)
        start = 1
        try:
            header = next(reader, None)
            if header is None:
                return
            lines.check(start, path)
            start = reader.line_num + 1
            for cells in reader:
                lines.check(start, path)
                if cells:  # a blank line has none
                    if len(cells) > len(header):
                        raise SampleError(
                            f"{len(cells)} cells but the header names {len(header)} columns",
                            file=str(path),
                            line=start,
                        )
                    # An empty cell is absent (CSV has no other way to say so; pandas agrees);
                    # a short row's missing cells too.
                    values = [v if v != "" else None for v in cells]
                    yield start, dict(zip(header, values, strict=False))
                start = reader.line_num + 1
        except csv.Error as err:
            raise SampleError(f"unreadable CSV: {err}", file=str(path), line=start) from err


class _Lines:
    """A CSV file's lines as the reader takes them, holding those of the record being read;
    ``check`` refuses a record that the end of the file cut off inside a quoted cell (Python's
    reader would take the rest of the file as that cell)."""

    def __init__(self, f: Iterator[str]):
        self._f = f
        self._held: list[str] = []
        self._ended = False

    def __iter__(self) -> Iterator[str]:
        for line in self._f:
            self._held.append(line)
            yield line
        self._ended = True

    def check(self, first: int, path: Path) -> None:
        """The record just read starts on line ``first``."""
        if self._ended:  # only the last record can end at the end of the file
            _check_closed(self._held, first, path)
        self._held.clear()


def _check_closed(record: list[str], first: int, path: Path) -> None:
    """Raise SampleError when the CSV ``record`` (the file's last, from line ``first``) ends
    inside a quoted cell: Python's reader then takes the rest of the file as that cell."""
    if not record or '"' not in "".join(record):
        return
    opened: int | None = None  # the line of the quote that opened the cell we are in
    at_start = True  # at a cell's start, where a quote opens a quoted cell
    for number, line in enumerate(record, first):
        i = 0
        while i < len(line):
            ch = line[i]
            if opened is not None:
                if ch == '"':
                    doubled = line[i + 1 : i + 2] == '"'
                    i += doubled  # "" is a quote in the cell; one quote closes it
                    opened = opened if doubled else None
            elif ch == '"' and at_start:
                opened = number
            else:
                at_start = ch in ",\r\n"
            i += 1
    if opened is not None:
        raise SampleError(
            "a quote opens a cell here and is never closed, so the rest of the file would "
            'be read as that cell; close it, or write a quote inside a cell as ""',
            file=str(path),
            line=opened,
        )


def _parquet(path: Path) -> list[dict[str, Any]]:
    try:
        with requires("reading Parquet"):
            import pyarrow.parquet as pq
    except ModuleNotFoundError as err:
        raise SampleError(str(err), file=str(path)) from err
    try:
        table = pq.read_table(path)
    except Exception as err:  # pyarrow's errors share no base class with a useful name
        raise SampleError(f"unreadable Parquet: {err}", file=str(path)) from err
    rows: list[dict[str, Any]] = table.to_pylist()  # Python values, nulls as None
    return rows


def _first_bad_byte(path: Path) -> tuple[int, int]:
    """The line and value of the first byte of ``path`` that is not UTF-8."""
    with path.open("rb") as f:
        for number, raw in enumerate(f, start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as err:
                return number, raw[err.start]
    return 1, 0


class DataRows:
    """The rows of one file or of every supported file in a directory (sorted by name), up
    to ``limit``; re-iterable. ``skipped`` lists a directory's other entries (other files,
    subfolders: they are not read); ``columns`` the column names seen; ``where`` the file,
    line and row (in that file) of the last row read; ``locate`` names the file and row of
    a global row index."""

    def __init__(self, path: Path, limit: int | None = None):
        self.path = path
        self.skipped: list[Path] = []
        if path.is_dir():
            entries = sorted(path.iterdir())
            self.files = [p for p in entries if p.is_file() and p.suffix.lower() in SUFFIXES]
            self.skipped = [p for p in entries if p not in self.files]
            if not self.files:
                found = f" (it holds {_names(self.skipped)})" if self.skipped else ""
                raise SampleError(
                    f"no {', '.join(SUFFIXES)} files in this directory{found}", file=str(path)
                )
        elif path.exists():
            _not_a_pipe(path)
            self.files = [path]
        else:
            raise FileNotFoundError(errno.ENOENT, "no such file or directory", str(path))
        self.limit = limit
        self.sizes: list[int] = []
        self.columns: set[str] = set()
        self.where: tuple[str, int | None, int] | None = None

    def skipped_note(self) -> str:
        """What a directory holds that is not read, in words."""
        return f"{self.path}: not read (not a data file, or a folder): {_names(self.skipped)}"

    def __iter__(self) -> Iterator[Any]:
        count = 0
        sizes: list[int] = []
        self.sizes = sizes
        for file in self.files:
            sizes.append(0)
            for line, row in read_file(file):
                if self.limit is not None and count >= self.limit:
                    return
                self.where = (str(file), line, sizes[-1])
                if isinstance(row, dict):
                    self.columns.update(map(str, row))
                sizes[-1] += 1
                count += 1
                yield row

    def locate(self, index: int) -> str:
        """``file, row n`` for a global row index (after one full pass)."""
        for file, size in zip(self.files, self.sizes, strict=False):
            if index < size:
                return f"{file.name}, row {index}"
            index -= size
        return f"row {index}"


def _not_a_pipe(path: Path) -> None:
    """Refuse a pipe or socket given as the data file: its reader would wait for a writer,
    maybe forever, and the rows are read more than once. (A device goes on to the line
    bound: /dev/zero is refused there.)"""
    mode = path.stat().st_mode
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        kind = "a pipe (FIFO)" if stat.S_ISFIFO(mode) else "a socket"
        raise SampleError(
            f"the data file is {kind}, not a regular file: ragrecall reads its data more "
            "than once; save the data to a file and give that",
            file=str(path),
        )


def _names(paths: list[Path]) -> str:
    """``a.txt, notes.md, sub/``: the names, a folder's with a slash."""
    return ", ".join(p.name + ("/" if p.is_dir() else "") for p in paths)
