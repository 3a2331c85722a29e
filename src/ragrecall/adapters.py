"""Building blocks the LangChain and LlamaIndex adapters share: where a query's reference
comes from, which run a retrieval belongs to, and ``blocking`` (the sync twin of a coroutine
function, run on the loop ``ragrecall.evaluate`` uses).

``References`` is a mapping ``query -> reference``, a dataset of samples (a list of dicts or
Samples, a DataFrame, a .jsonl/.json/.csv/.parquet path: anything ``ragrecall.load_samples``
reads), or a callable ``query -> reference | None``. A reference is a string, or a dict /
Sample that may also carry ``reference_claims`` (which skips decomposition).

``sampled`` picks the share of production traffic to score (``sample_rate=``), by a hash of
the query text or run id: the same queries are scored run after run.

``error_type`` is an unscorable result's class of failure, for a host's error field (OTel's
``error.type``, MLflow's ``AssessmentError.error_code``).
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, Generic, Literal, TypeAlias, TypeVar

from ._core.schemas import RecallResult, Sample
from ._io.samples import load_samples
from ._running.engines.stream import blocking

__all__ = [
    "ReferenceBook",
    "References",
    "RunTree",
    "SampleKey",
    "as_reference",
    "blocking",
    "check_rate",
    "error_type",
    "sampled",
]

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


K = TypeVar("K", bound=Hashable)


class RunTree(Generic[K]):
    """Parent links of the runs (LangChain) or spans (LlamaIndex) in flight, thread-safe.

    A link is kept from a run's start to its end; ``ancestors`` walks up from a run through the
    parents still known (an unknown parent ends the walk)."""

    def __init__(self) -> None:
        self._parents: dict[K, K | None] = {}
        self.lock = threading.RLock()

    def enter(self, run: K, parent: K | None) -> None:
        with self.lock:
            self._parents[run] = parent

    def leave(self, run: K) -> None:
        with self.lock:
            self._parents.pop(run, None)

    def clear(self) -> None:
        with self.lock:
            self._parents.clear()

    def ancestors(self, run: K) -> list[K]:
        """``run``, its parent, its parent's parent, ... (at most 1,000: a cycle ends there)."""
        chain: list[K] = []
        node: K | None = run
        with self.lock:
            while node is not None and len(chain) < 1000:
                chain.append(node)
                node = self._parents.get(node)
        return chain

    def root(self, run: K) -> K:
        """The outermost known ancestor of ``run`` (``run`` itself when it has no parent)."""
        return self.ancestors(run)[-1]


# What production traffic is sampled on: the query text, or the framework's run (trace) id.
SampleKey = Literal["query", "run_id"]


def check_rate(rate: float) -> float:
    """``rate`` if it is a share in [0, 1]; ValueError otherwise."""
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"sample_rate must be in [0, 1], not {rate}")
    return rate


def sampled(key: str | None, rate: float) -> bool:
    """Whether the retrieval keyed ``key`` is in the scored share ``rate``: a hash of the key,
    so the same queries (or runs) are scored run after run, on every machine."""
    if rate >= 1.0:
        return True
    digest = hashlib.sha256((key or "").encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") < rate * 2**64


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
