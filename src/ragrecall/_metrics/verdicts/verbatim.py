"""Claims a passage states word for word: supported by the library's own check, no judge asked.

A claim that is, up to case, width, quotes, whitespace and the punctuation at its edges, one
or more whole sentences, lines or clauses after a semicolon of a passage (a link standing
apart), is stated there. The judge is not asked: no judge, swayed or small, can add to that,
and no order in view can have bought it (without the order the passage still states it: a
planted statement counts, as a recall metric counts what a chunk states). Decomposition keeps
a reference's lines of code, tables and logs as they are, and a small judge often refuses them
beside the text that holds them (``benchmarks/security/technical.py``). On the shared
LFQA-Verification answers, every claim stated word for word is one people label supported
(benchmarks/RESULTS.md).

A claim the rules made of a reference's table row or list item counts when a passage's table
or list, read by the same rules, makes the same statement.

A part of a sentence is not enough ("the bridge was designed by X" inside "it is not true
that the bridge was designed by X"): such claims go to the judge. Evidence that addresses the
judge, or repeats the claim in a chunk with hidden text, never counts
(``grounding.evidence_refusal``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ragrecall._core.schemas import ClaimVerdict

from ..claims.structure import split_structure
from ..text.windows import Window
from ..text.words import normalize, split_sentences
from .grounding import evidence_refusal

__all__ = ["stated"]

# What may stand at a claim's or a unit's edges without changing what it says: quotes,
# sentence marks, brackets, list bullets, a comment's hash.
_EDGE = " \t\n\"'.,;:!?()[]-*\u2022#>"
_ALNUM = re.compile(r"\w")
_CLAUSE = re.compile(r"(?<=;)\s")  # a clause after a semicolon stands alone
# A link is a unit of its own: it cites, it does not say ("Source: https://... Guernica was ...").
_LINK = re.compile(r"(\S+://\S+)")


def stated(claims: Sequence[str], window: Window) -> dict[int, ClaimVerdict]:
    """A supported verdict on each of ``claims`` (by index) that a passage of ``window``
    states word for word, in whole units; the others are left out."""
    index = _index(tuple(p.text for p in window))
    found: dict[int, ClaimVerdict] = {}
    for i, core in enumerate(_normalized(claims)):
        core = core.strip(_EDGE)
        if _ALNUM.search(core) and (hit := index.find(core, claims[i], window)) is not None:
            number, chunk_id, evidence = hit
            found[i] = ClaimVerdict(
                claim=claims[i],
                attributed=True,
                chunk_ids=[chunk_id],
                evidence=evidence,
                evidence_verified=True,
                reason=f"supported; passage {number} states it word for word",
            )
    return found


@dataclass(frozen=True)
class _Index:
    """A window's units (sentences, cut at line ends, after semicolons and around links)
    normalised and joined: passages by a line break (normalised text has none, so no match
    spans two), units by a space; where each unit starts and ends there (with and without the
    punctuation at its edges), mapped to its passage and unit; and the units as the text has
    them."""

    joined: str
    starts: dict[int, tuple[int, int]]
    ends: dict[int, tuple[int, int]]
    units: tuple[tuple[str, ...], ...]
    statements: dict[str, tuple[int, str]]

    def find(self, core: str, claim: str, window: Window) -> tuple[int, str, str] | None:
        """A statement the rules read in a passage's tables and lists that reads ``core``, or
        else the first run of whole units of one passage that does, that may support
        ``claim``: the passage's number, its chunk's id, the evidence."""
        if (held := self.statements.get(core)) is not None:
            passage = window[held[0]]
            if not evidence_refusal(claim, held[1], passage.text):
                return passage.number, passage.chunk.id, held[1]
        at = self.joined.find(core)
        while at >= 0:
            first, last = self.starts.get(at), self.ends.get(at + len(core))
            if first is not None and last is not None and first[0] == last[0]:
                passage = window[first[0]]
                evidence = " ".join(self.units[first[0]][first[1] : last[1] + 1])
                if not evidence_refusal(claim, evidence, passage.text):
                    return passage.number, passage.chunk.id, evidence
            at = self.joined.find(core, at + 1)
        return None


@functools.lru_cache(maxsize=256)
def _index(texts: tuple[str, ...]) -> _Index:
    """Cached: every claim of a sample, and every metric that scores it, reads the same
    window. A table's row or a list's item becomes a statement as the rules make a claim of
    it in a reference ("Plans: Pro: Storage 100 GB"), so such a claim is found in a passage
    that holds the same table."""
    structured = [
        (p, unit.text) for p, text in enumerate(texts) for unit in split_structure(text)
        if unit.structured
    ]  # fmt: skip
    said = _normalized([text for _, text in structured])
    statements: dict[str, tuple[int, str]] = {}
    for (p, text), norm in zip(structured, said, strict=True):
        statements.setdefault(norm.strip(_EDGE), (p, text))
    units = tuple(
        tuple(
            piece.strip()
            for sentence in split_sentences(text)
            for line in sentence.splitlines()
            for part in _CLAUSE.split(line)
            for piece in _LINK.split(part)
            if piece.strip()
        )
        for text in texts
    )
    normalized = iter(_normalized([u for passage in units for u in passage]))
    parts: list[str] = []
    starts: dict[int, tuple[int, int]] = {}
    ends: dict[int, tuple[int, int]] = {}
    at = 0
    for p, passage in enumerate(units):
        for u in range(len(passage)):
            norm = next(normalized)
            inner = norm.strip(_EDGE)
            lead = norm.find(inner) if inner else 0
            starts.setdefault(at, (p, u))
            starts.setdefault(at + lead, (p, u))
            ends[at + len(norm)] = (p, u)
            ends[at + lead + len(inner)] = (p, u)
            parts.append(norm + " ")
            at += len(norm) + 1
        parts.append("\n")
        at += 1
    return _Index("".join(parts), starts, ends, units, statements)


def _normalized(texts: Sequence[str]) -> list[str]:
    """``normalize`` of each of ``texts``, in one call: NUL, taken out of them, keeps them
    apart (a window's units or a sample's claims are many short texts)."""
    if not texts:
        return []
    joined = normalize("\0".join(t.replace("\0", " ") for t in texts))
    return [t.strip() for t in joined.split("\0")]
