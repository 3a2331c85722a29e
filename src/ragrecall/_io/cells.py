"""Every CSV ragrecall writes goes through ``write_csv``: cells a spreadsheet would run as a
formula are neutralised, as OWASP's CSV-injection guidance says.

A text cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return (or with the
single quote itself, so that the mark can be taken off unambiguously) gets a single quote in
front: the spreadsheet shows it as text and runs nothing. So does one where spaces, line breaks
or invisible characters (categories Zs, Zl, Zp, Cc, Cf: U+200B, U+FEFF, ...) come before such a
sign, or where the sign is a compatibility form of one (fullwidth U+FF1D, small U+FE62: NFKC is
used for the check only, the text is kept). Numbers are written as they are.
``read_cell`` takes the mark off again, so a file ragrecall wrote reads back exactly (the
review CSV, read by ``calibrate``). The JSONL exports are never touched.
"""

from __future__ import annotations

import csv
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

__all__ = ["FORMULA_STARTS", "read_cell", "safe_cell", "write_csv"]

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_MARK = "'"
_SIGNS = ("=", "+", "-", "@")
_SKIPPED = frozenset({"Zs", "Zl", "Zp", "Cc", "Cf"})


def safe_cell(value: object) -> object:
    """``value`` as a CSV cell: None is empty; text a spreadsheet would run is marked."""
    if value is None:
        return ""
    if isinstance(value, str) and (value.startswith((*FORMULA_STARTS, _MARK)) or _runs(value)):
        return _MARK + value
    return value


def _runs(text: str) -> bool:
    """Whether ``text``, past leading blanks and invisible characters, starts with a formula
    sign or a compatibility form of one."""
    for char in text:
        if unicodedata.category(char) not in _SKIPPED:
            return unicodedata.normalize("NFKC", char).startswith(_SIGNS)
    return False


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
