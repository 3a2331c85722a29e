"""What each attempt of a ``generate`` run makes (its kind and source chunks, fixed by the seed
and its number alone), the question kinds' mix, and the dry run's estimate of the work.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .._core.schemas import Chunk
from .._metrics.text.words import content_words
from .prompts import KINDS, Kind

__all__ = ["DEFAULT_MIX", "Estimate", "Plan", "Planner", "check_mix", "cost", "estimate"]

DEFAULT_MIX: dict[str, float] = {
    "single": 0.5,
    "multi_hop": 0.2,
    "comparison": 0.15,
    "aggregation": 0.15,
}

# Judge calls an attempt is expected to take (a reply, a decomposition, one verdict per
# claim; a multi-chunk item's check of each chunk alone), for the budget and the dry run.
_CALLS: dict[str, int] = {"single": 4, "multi_hop": 7, "comparison": 7, "aggregation": 8}
_ACCEPTED_SHARE = 0.5  # the dry run's assumed acceptance rate (see benchmarks/RESULTS.md)


@dataclass(frozen=True)
class Plan:
    """Attempt ``number``: its kind and source chunks."""

    number: int
    kind: Kind
    sources: tuple[Chunk, ...]


def cost(plan: Plan) -> tuple[int, int]:
    """The judge calls and tokens an attempt at ``plan`` is expected to take (its budget)."""
    tokens = sum(len(c.text) for c in plan.sources) // 4 + 250
    return _CALLS[plan.kind], _CALLS[plan.kind] * tokens


def check_mix(mix: Mapping[str, float]) -> dict[str, float]:
    """The kinds' weights, checked: known kinds, weights >= 0, at least one above 0."""
    out: dict[str, float] = {}
    for name, weight in mix.items():
        kind = next((k for k in KINDS if k == name), None)
        if kind is None:
            raise ValueError(f"unknown question kind {name!r}; the kinds: {', '.join(KINDS)}")
        if not (weight >= 0 and math.isfinite(weight)):
            raise ValueError(f"the weight of {name} must be a number >= 0, not {weight}")
        out[kind] = float(weight)
    if not any(out.values()):
        raise ValueError("the mix gives no kind a weight above 0")
    return out


class Planner:
    """Attempt k's kind and chunks, from the seed and k alone. Seed chunks go through the
    corpus in a shuffled order; a multi-chunk item's partners are among the seed chunk's five
    most similar chunks (TF-IDF cosine over content words), from other documents first."""

    def __init__(self, chunks: Sequence[Chunk], mix: Mapping[str, float], seed: int):
        self.chunks, self.seed = list(chunks), seed
        self.kinds: list[Kind] = [k for k in KINDS if mix.get(k, 0) > 0]
        self.weights = [mix[k] for k in self.kinds]
        self.order = list(range(len(self.chunks)))
        random.Random(f"{seed}:order").shuffle(self.order)
        self.words = [content_words(c.text) for c in self.chunks]
        df: Counter[str] = Counter(w for ws in self.words for w in ws)
        total = len(self.chunks)
        self.idf = {w: math.log((1 + total) / (1 + d)) + 1 for w, d in df.items()}
        self._near: dict[int, list[int]] = {}

    def plan(self, number: int) -> Plan:
        rng = random.Random(f"{self.seed}:{number}")
        kind: Kind = rng.choices(self.kinds, self.weights)[0]
        first = self.order[number % len(self.order)]
        if kind == "single" or len(self.chunks) < 2:
            return Plan(number, "single", (self.chunks[first],))
        wanted = 2 if kind != "aggregation" or len(self.chunks) < 3 else 3
        partners = rng.sample(self._neighbours(first), wanted - 1)
        return Plan(number, kind, tuple(self.chunks[i] for i in [first, *partners]))

    def _neighbours(self, i: int) -> list[int]:
        if i not in self._near:
            doc = self._document(i)
            scored = []
            for j in range(len(self.chunks)):
                if j == i:
                    continue
                shared = self.words[i] & self.words[j]
                dot = sum(self.idf[w] ** 2 for w in shared)
                norm = math.sqrt(self._norm(i) * self._norm(j)) or 1.0
                other_doc = self._document(j) != doc
                scored.append((not other_doc, -dot / norm, j))
            self._near[i] = [j for _, _, j in sorted(scored)[:5]]
        return self._near[i]

    def _norm(self, i: int) -> float:
        return sum(self.idf[w] ** 2 for w in self.words[i])

    def _document(self, i: int) -> str:
        chunk = self.chunks[i]
        return str(chunk.metadata.get("document_id", chunk.id))


@dataclass(frozen=True)
class Estimate:
    """The dry run's estimate: attempts, judge calls and tokens for ``n`` items."""

    chunks: int
    items: int
    attempts: int
    calls: int
    tokens: int


def estimate(
    chunks: Sequence[Chunk], n: int, mix: Mapping[str, float] | None = None, done: int = 0
) -> Estimate:
    """The work ``n`` items take (``done`` of them made already), at the assumed acceptance
    rate; no judge is called."""
    weights = check_mix(mix or DEFAULT_MIX)
    total = sum(weights.values())
    per_attempt = sum(_CALLS[k] * w for k, w in weights.items()) / total
    left = max(n - done, 0)
    attempts = math.ceil(left / _ACCEPTED_SHARE)
    mean_chars = sum(len(c.text) for c in chunks) / max(len(chunks), 1)
    tokens = int(attempts * per_attempt * (mean_chars * 1.5 / 4 + 250))
    return Estimate(len(chunks), left, attempts, math.ceil(attempts * per_attempt), tokens)
