"""Which retrievals of production traffic the adapters score: ``RunTree`` (the parent links of
the runs or spans in flight) and ``sampled`` (the share to score, ``sample_rate=``, by a hash of
the query text or run id: the same queries are scored run after run)."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Hashable
from typing import Generic, Literal, TypeVar

__all__ = ["RunTree", "SampleKey", "check_rate", "sampled"]

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
