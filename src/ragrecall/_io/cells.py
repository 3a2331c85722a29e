"""Every CSV ragrecall writes goes through ``write_csv``: cells a spreadsheet would run as a
formula are neutralised, as OWASP's CSV-injection guidance says.

A text cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return (or with the
single quote itself, so that the mark can be taken off unambiguously) gets a single quote in
front: the spreadsheet shows it as text and runs nothing. Numbers are written as they are.
``read_cell`` takes the mark off again, so a file ragrecall wrote reads back exactly (the
review CSV, read by ``calibrate``). The JSONL exports are never touched.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

__all__ = ["FORMULA_STARTS", "read_cell", "safe_cell", "write_csv"]

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_MARK = "'"


def safe_cell(value: object) -> object:
    """``value`` as a CSV cell: None is empty; text a spreadsheet would run is marked."""
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith((*FORMULA_STARTS, _MARK)):
        return _MARK + value
    return value


def read_cell(text: str) -> str:
    """A cell of a CSV that ``write_csv`` wrote, as the text it was given."""
    return text[1:] if text.startswith(_MARK) else text


def write_csv(
    path: str | Path, columns: Sequence[str], rows: Iterable[Mapping[str, object]]
) -> None:
    """``rows`` (their ``columns``, in order) as a UTF-8 CSV file with a header."""
    with Path(path).open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(columns)
        for row in rows:
            writer.writerow([safe_cell(row.get(c)) for c in columns])
