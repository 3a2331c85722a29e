"""Exceptions raised by ragrecall.

    RagrecallError
    ├── SampleError (also ValueError)      bad input, named by file, line, row and field
    ├── JudgeError                         an unusable judge reply; keeps the raw output
    ├── JudgeRateLimitError                the judge asked to wait longer than allowed
    ├── JudgeModelError                    the embedded judge's model file is missing or corrupt
    │   └── ModelIntegrityError            size or SHA-256 does not match
    └── CalibrationError (also ValueError) a calibration profile for another judge or prompt
                                           version, a file that is not one, unusable labels

Scoring never raises for a judge failure: the sample becomes unscorable with the reason.
These exceptions reach users only at load time (bad data) or when they call a judge directly.
"""

from __future__ import annotations

__all__ = [
    "CalibrationError",
    "JudgeError",
    "JudgeModelError",
    "JudgeRateLimitError",
    "ModelIntegrityError",
    "RagrecallError",
    "SampleError",
]


class RagrecallError(Exception):
    """Base class of every ragrecall exception."""


class SampleError(RagrecallError, ValueError):
    """A sample cannot be read. Names the file and line it came from (Parquet and JSON
    arrays have no line per row), the row (counted from 0 in that file) and the field, as
    known: ``data.csv:7: row 5, field 'reference': ...``."""

    def __init__(
        self,
        message: str,
        *,
        row: int | str | None = None,
        field: str | None = None,
        file: str | None = None,
        line: int | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.row = row
        self.field = field
        self.file = file
        self.line = line

    def locate(self, file: str, line: int | None, row: int | None) -> None:
        """Name the file, line and row (in that file) this error came from, unless it names
        a file already."""
        if self.file is None:
            self.file, self.line = file, line
            self.row = row if row is not None else self.row

    def __str__(self) -> str:
        place = []
        if self.row is not None:
            place.append(f"row {self.row}")
        if self.field is not None:
            place.append(f"field {self.field!r}")
        prefix = f"{', '.join(place)}: " if place else ""
        if self.file is not None:
            prefix = f"{self.file}{'' if self.line is None else f':{self.line}'}: {prefix}"
        return prefix + self.message


class JudgeError(RagrecallError):
    """The judge's reply could not be turned into a verdict."""

    def __init__(self, message: str, *, raw_output: str | None = None):
        super().__init__(message)
        self.raw_output = raw_output


class JudgeRateLimitError(RagrecallError):
    """The judge's ``Retry-After`` asks for a longer wait than ``Policy.max_wait`` allows."""

    def __init__(self, message: str, *, retry_after: float):
        super().__init__(message)
        self.retry_after = retry_after


class JudgeModelError(RagrecallError):
    """The embedded judge's model file is missing or unusable; the message says how to get it."""


class ModelIntegrityError(JudgeModelError):
    """A model file's size or SHA-256 does not match the pinned values."""


class CalibrationError(RagrecallError, ValueError):
    """A calibration profile that does not fit (another judge or prompt version, a file that
    is not one), or labels that cannot be calibrated on. Raised before any sample is scored."""
