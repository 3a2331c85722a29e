"""Where a query's reference comes from, for the adapters and ``load_traces``.

``References`` is a mapping ``query -> reference``, a dataset of samples (a list of dicts or
Samples, a DataFrame, a .jsonl/.json/.csv/.parquet path: anything ``ragrecall.load_samples``
reads), or a callable ``query -> reference | None``. A reference is a string, or a dict /
Sample that may also carry ``reference_claims`` (which skips decomposition).

``error_type`` is an unscorable result's class of failure, for a host's error field (OTel's
``error.type``, MLflow's ``AssessmentError.error_code``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeAlias

from .._core.schemas import RecallResult, Sample
from .samples import load_samples

__all__ = ["ReferenceBook", "References", "as_reference", "error_type"]

# The reference-side fields a reference may carry besides the answer itself.
_REFERENCE_FIELDS = ("reference_claims", "reference_ids", "reference_contexts", "relevance")

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
    fields = {name: getattr(sample, name) for name in _REFERENCE_FIELDS}
    return Sample(user_input=query, reference=sample.reference, **fields)


class ReferenceBook:
    """Looks up references by query: exact match first, then whitespace- and case-insensitive
    (the one rule both adapters use)."""

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
        return as_reference(query, self.find(query))

    def find(self, query: str) -> Any:
        """The value stored for ``query`` as given (exact match first, then whitespace- and
        case-insensitive), or what the callable returns; None if none."""
        if self._fn is not None:
            return self._fn(query)
        value = self._table.get(query)
        return self._loose.get(_norm(query)) if value is None else value


# An exception's class name in an unscorable reason ("judge failed: JudgeError: ...").
_EXCEPTION = re.compile(r"\b([A-Z][A-Za-z0-9_]*(?:Error|Exception|Timeout|Exceeded))\b")


def error_type(result: RecallResult) -> str | None:
    """What kind of failure left ``result`` unscorable, in a few words, as OTel's ``error.type``
    wants it (low-cardinality): the exception's class name where the judge or the scoring
    raised one (``JudgeError``, ``RateLimitError``, ...), else ``"_OTHER"`` (the reason says
    what was missing: no reference, no contexts, ...). None for a scored result."""
    if result.status != "unscorable":
        return None
    found = _EXCEPTION.search(result.reason)
    return found[1] if found else "_OTHER"
