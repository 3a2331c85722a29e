"""Where the reference answer for a query comes from.

``References`` is a mapping ``query -> reference``, a dataset of samples (a list of dicts or
Samples, a DataFrame, a .jsonl/.json/.csv/.parquet path: anything ``ragrecall.load_samples``
reads), or a callable ``query -> reference | None``. A reference is a string, or a dict /
Sample that may also carry ``reference_claims`` (which skips decomposition).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeAlias

from ragrecall import Sample, load_samples

__all__ = ["ReferenceBook", "References", "as_reference"]

References: TypeAlias = (
    Mapping[str, Any]
    | Sequence[Mapping[str, Any] | Sample]
    | Callable[[str], Any]
    | str
    | os.PathLike[str]
)


def _norm(query: str) -> str:
    return " ".join(query.split()).casefold()


def as_reference(query: str, value: Any) -> Sample | None:
    """A Sample holding ``query`` and the reference (and claims) from ``value``; None if none."""
    if value is None:
        return None
    if isinstance(value, str):
        return Sample(user_input=query, reference=value) if value.strip() else None
    if isinstance(value, Sample):
        sample = value
    elif isinstance(value, Mapping):
        sample = Sample.model_validate(dict(value))
    else:
        raise TypeError(f"a reference is a string, dict or Sample, not {type(value).__name__}")
    if not (sample.reference or "").strip() and not sample.reference_claims:
        return None
    return Sample(
        user_input=query,
        reference=sample.reference,
        reference_claims=sample.reference_claims,
        reference_ids=sample.reference_ids,
    )


class ReferenceBook:
    """Looks up references by query: exact match first, then whitespace- and case-insensitive."""

    def __init__(self, source: References | None):
        self._fn: Callable[[str], Any] | None = None
        self._table: dict[str, Any] = {}
        self._loose: dict[str, Any] = {}
        if source is None:
            return
        if isinstance(source, Mapping):
            rows: list[tuple[str, Any]] = [(str(k), v) for k, v in source.items()]
        elif callable(source):
            self._fn = source
            return
        else:
            rows = []
            for i, sample in enumerate(load_samples(source)):
                if sample.user_input is None:
                    raise ValueError(f"reference row {i} has no question (user_input)")
                rows.append((sample.user_input, sample))
        for query, value in rows:
            self._table[query] = value
            self._loose.setdefault(_norm(query), value)

    def __bool__(self) -> bool:
        return self._fn is not None or bool(self._table)

    def lookup(self, query: str) -> Sample | None:
        if self._fn is not None:
            return as_reference(query, self._fn(query))
        value = self._table.get(query)
        if value is None:
            value = self._loose.get(_norm(query))
        return as_reference(query, value)
