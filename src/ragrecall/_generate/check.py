"""What a generated item must pass before it is kept: its question does not copy the source
chunks' wording, is no near-duplicate of a question kept already, and every claim of its
reference is supported by its source chunks with verified evidence (``ContextRecall`` against
them, recall 1.0); an item built from several chunks needs them all (no one chunk supports
every claim)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .._core.schemas import Chunk, RecallResult, Sample, Usage
from .._judge.drive import Steps
from .._metrics.context_recall import ContextRecall
from .._metrics.text.words import content_words, normalize

__all__ = [
    "REASONS",
    "Verdict",
    "copy_overlap",
    "is_near_duplicate",
    "names_source",
    "question_words",
    "supported",
]

# Why an item is rejected, in the order the checks run.
REASONS = (
    "invalid_reply",  # the judge gave no usable question and answer
    "names_source",  # the question or answer speaks of "the passage" the user never saw
    "copies_chunk",  # the question copies the source chunks' wording (max_overlap)
    "duplicate",  # a near-duplicate of a question kept already
    "unscorable",  # the reference could not be checked (no claims, a judge failure)
    "unsupported",  # a claim is not supported by the source chunks with verified evidence
    "one_chunk_suffices",  # a multi-chunk item whose claims one chunk supports alone
)

_WORD = re.compile(r"\w+")


_SOURCE = re.compile(r"\b(passages?|according to the (text|article|document))\b", re.I)


def names_source(text: str) -> bool:
    """Whether ``text`` speaks of the passages it was written from ("in the first passage")."""
    return _SOURCE.search(text) is not None


def question_words(text: str) -> list[str]:
    return _WORD.findall(normalize(text))


def copy_overlap(question: str, texts: Sequence[str], n: int = 3) -> float:
    """The share of the question's word ``n``-grams (lower-cased, punctuation dropped) that
    occur in one of ``texts``: 0 for a question in its own words, 1 for a copied sentence. A
    question shorter than ``n`` words is compared word by word."""
    words = question_words(question)
    n = min(n, len(words)) or 1
    grams = {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}
    if not grams:
        return 0.0
    found: set[tuple[str, ...]] = set()
    for text in texts:
        w = question_words(text)
        found |= {tuple(w[i : i + n]) for i in range(len(w) - n + 1)}
    return len(grams & found) / len(grams)


def is_near_duplicate(question: str, kept: Sequence[str], threshold: float) -> bool:
    """Whether ``question`` shares at least ``threshold`` of its content words (Jaccard: the
    words but "the", "of", "what", ...) with one of ``kept``."""
    words = _question_content(question)
    for other in kept:
        theirs = _question_content(other)
        union = words | theirs
        if union and len(words & theirs) / len(union) >= threshold:
            return True
    return False


_QUESTION_WORDS = frozenset(
    ["what", "which", "who", "whom", "whose", "when", "where", "why", "how"]
)


def _question_content(text: str) -> set[str]:
    return content_words(text) - _QUESTION_WORDS


@dataclass
class Verdict:
    """The support check: ``reason`` is "" when the item passed (else one of REASONS),
    ``detail`` says why, ``used``: the source chunks the verdicts cite, ``claims``: the
    reference's claims."""

    reason: str
    detail: str
    used: list[Chunk]
    claims: list[str]


def supported(
    recall: ContextRecall,
    question: str,
    reference: str,
    sources: Sequence[Chunk],
    usage: Usage,
) -> Steps[Verdict]:
    """Score the reference with ``recall`` against its source chunks; every claim must be
    supported with verified evidence. With several sources, the chunks the verdicts cite
    are kept, at least two, and each of them alone is scored against the claims it was not
    cited for: if one supports every claim, the item does not need several chunks."""
    sample = Sample(user_input=question, reference=reference, retrieved_contexts=list(sources))
    result = yield from _scored(recall, sample, usage)
    if result.score is None:
        return Verdict("unscorable", result.reason, [], result.claims)
    missing = [v for v in result.verdicts if not (v.attributed and v.evidence_verified)]
    if missing:
        return Verdict("unsupported", f"not supported: {missing[0].claim!r}", [], result.claims)
    cited = {i for v in result.verdicts for i in v.chunk_ids}
    used = [c for c in sources if c.id in cited]
    if len(sources) == 1:
        return Verdict("", "", used, result.claims)
    if len(used) < 2:
        detail = f"every claim is supported by chunk {used[0].id if used else '?'} alone"
        return Verdict("one_chunk_suffices", detail, used, result.claims)
    for chunk in used:
        others = [v.claim for v in result.verdicts if chunk.id not in v.chunk_ids]
        only = Sample(user_input=question, reference_claims=others, retrieved_contexts=[chunk])
        alone = yield from _scored(recall, only, usage)
        if alone.score == 1.0 and all(v.evidence_verified for v in alone.verdicts):
            detail = f"every claim is supported by chunk {chunk.id} alone"
            return Verdict("one_chunk_suffices", detail, used, result.claims)
    return Verdict("", "", used, result.claims)


def _scored(recall: ContextRecall, sample: Sample, usage: Usage) -> Steps[RecallResult]:
    """``recall``'s result for ``sample``, its judge work added to ``usage``."""
    result = yield from recall._run(sample)
    for name in Usage.model_fields:
        setattr(usage, name, getattr(usage, name) + getattr(result.usage, name))
    return result
