"""Reading files that may be hostile: bounded lines, JSON nested too deeply for Python's
parser, paths that are devices or pipes. Each becomes a ``SampleError`` (or a
``json.JSONDecodeError``, which every reader already names by file and line), never a
``RecursionError`` or ``MemoryError``.
"""

from __future__ import annotations

import json
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from .._core.errors import SampleError

__all__ = [
    "MAX_LINE_BYTES",
    "field_errors",
    "lines",
    "loads",
    "lone_surrogate",
    "regular_file",
]

MAX_LINE_BYTES = 256 * 1024 * 1024  # a line longer than this is not one ragrecall wrote


def loads(doc: str | bytes) -> Any:
    """``json.loads``; a document nested too deeply raises ``json.JSONDecodeError``."""
    try:
        return json.loads(doc)
    except RecursionError:
        text = doc if isinstance(doc, str) else doc.decode("utf-8", "replace")
        raise json.JSONDecodeError("nested too deeply", text, _deepest(text)) from None


# A \uD800-\uDFFF escape in JSON (group 1: the backslashes before the u; group 2: which half).
_SURROGATE = re.compile(r"(\\+)u[dD]([89a-fA-F])[0-9a-fA-F]{2}")


def lone_surrogate(text: str) -> int | None:
    """Where in the JSON ``text`` the first escape of half a UTF-16 pair stands alone
    (``"\\ud800"``): ``json.loads`` takes it, but it is not text, and it cannot be written
    as UTF-8. None when there is none (a pair, ``\\ud83d\\ude00``, is one character)."""
    high = high_end = -1  # where an unpaired high half stands, until a low half follows it
    for m in _SURROGATE.finditer(text):
        if len(m[1]) % 2 == 0:  # "\\ud800": an escaped backslash, then the letters
            continue
        is_high = m[2].lower() in "89ab"
        if high >= 0 and not is_high and m.start() == high_end:
            high = -1
            continue
        if high >= 0 or not is_high:
            return high if high >= 0 else m.start()
        high, high_end = m.start(), m.end()
    return high if high >= 0 else None


def _deepest(text: str, limit: int = 500) -> int:
    """Where the nesting of ``text`` first goes ``limit`` deep (0 if it never does)."""
    depth = 0
    for i, ch in enumerate(text):
        if ch in "[{":
            depth += 1
            if depth >= limit:
                return i
        elif ch in "]}":
            depth -= 1
    return 0


def lines(f: IO[bytes], path: str | Path) -> Iterator[tuple[int, bytes]]:
    """Each line of ``f`` with its number (from 1), the newline kept; a line longer than
    ``MAX_LINE_BYTES`` raises SampleError naming the file and line, before it is all read."""
    number = 0
    while True:
        number += 1
        raw = f.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        if len(raw) > MAX_LINE_BYTES:
            raise SampleError(
                f"a line longer than {MAX_LINE_BYTES // (1024 * 1024)} MiB: not a ragrecall "
                "file (or not a text file)",
                file=str(path),
                line=number,
            )
        yield number, raw


def regular_file(path: str | Path, what: str = "file") -> None:
    """Raise SampleError when ``path`` exists and is not a regular file (a device such as
    /dev/zero, a pipe, a folder): ragrecall reads and rewrites its files as a whole."""
    try:
        mode = Path(path).stat().st_mode
    except OSError:
        return
    if not stat.S_ISREG(mode):
        kind = "a folder" if stat.S_ISDIR(mode) else "a device, pipe or socket"
        raise SampleError(f"the {what} is {kind}, not a regular file", file=str(path))


def field_errors(err: ValidationError) -> str:
    """Pydantic's errors, one clause each: ``field 'scale_a': Input should be greater than 0``
    (a missing field: ``field 'scale_b': Field required``)."""
    return "; ".join(
        f"field {'.'.join(str(part) for part in e['loc']) or '(whole)'!r}: {e['msg']}"
        + ("" if e["type"] == "missing" else f" (got {_shown(e.get('input'))})")
        for e in err.errors()
    )


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
