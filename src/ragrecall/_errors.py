"""Exceptions raised by ragrecall.

    RagrecallError
    ├── SampleError (also ValueError)      bad input, named by row and field
    ├── JudgeError                         an unusable judge reply; keeps the raw output
    ├── JudgeRateLimitError                the judge asked to wait longer than allowed
    └── JudgeModelError                    the embedded judge's model file is missing or corrupt
        └── ModelIntegrityError            size or SHA-256 does not match

Scoring never raises for a judge failure: the sample becomes unscorable with the reason.
These exceptions reach users only at load time (bad data) or when they call a judge directly.
"""

from __future__ import annotations

__all__ = [
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
    """A sample cannot be read: names the row (when known) and the field."""

    def __init__(self, message: str, *, row: int | str | None = None, field: str | None = None):
        where = []
        if row is not None:
            where.append(f"row {row}")
        if field is not None:
            where.append(f"field {field!r}")
        prefix = f"{', '.join(where)}: " if where else ""
        super().__init__(prefix + message)
        self.row = row
        self.field = field


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
