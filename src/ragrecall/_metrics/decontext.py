"""Claims that stand alone: compound claims split by rule, references resolved by the judge.

After the judge splits a reference, a claim may still lean on its neighbours ("They stopped
touring in 1966.", "The company entered mobile phones.") and be judged against passages about
another "they". Three steps, in order:

1. ``split_compound``: "X; Y" and "X, and they Y" become two claims (rule, no judge).
2. ``needs_context``: a rule finds the claims that do not stand alone (a plural or leading
   pronoun, a demonstrative, a definite description such as "the company", a quantified
   reference such as "neither of them"); a claim that stands alone costs nothing.
3. ``decontextualise``: one judge call per reference rewrites the flagged claims with the
   reference as context. A rewrite is kept only if every word it inserts is a referent that
   appears verbatim in the reference and every word it drops is a reference word
   (``accept_rewrite``); otherwise the original stays, and ``needs_context`` keeps marking it.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable

from .._errors import JudgeError
from .._judge.drive import Call, Steps, ask
from .._judge.structured import structured
from .._schemas import Usage
from ..prompts import DECONTEXT_PROMPT, Rewrites

__all__ = [
    "accept_rewrite",
    "decontext_chain",
    "decontextualise",
    "needs_context",
    "split_compound",
]

# Words that point outside the claim wherever they stand.
_PLURAL = r"they|them|their|theirs|themselves"
# Words that point outside the claim at its start (a claim's own subject, unnamed).
_LEADING = r"it|its|he|she|his|her|this|these|those|that|both|neither|each|all|either"
_QUANTIFIED = (
    r"(?:neither|both|each|either|all|none|one|some|most)\s+of\s+(?:them|these|those|the\s+two)"
    r"|the\s+(?:former|latter|other|others|two|three|four|first|second|third|last|larger"
    r"|smaller|older|newer|pair)\b"
    r"|all\s+(?:two|three|four|five)\b"
)
_DEMONSTRATIVE = r"(?:this|these|those)\s+[a-z]"
_PATTERNS = [
    re.compile(rf"\b(?:{_PLURAL})\b", re.IGNORECASE),
    re.compile(rf"^\W*(?:{_LEADING})\b", re.IGNORECASE),
    re.compile(rf"\b(?:{_QUANTIFIED})", re.IGNORECASE),
    re.compile(rf"\b{_DEMONSTRATIVE}", re.IGNORECASE),
    # a definite description as subject: "The company ...", not "The Golden Gate Bridge ..."
    re.compile(r"^\W*[Tt]he\s+[a-z][a-z-]*\b(?!\s+(?:of|in|at|for|from)\b)"),
]

# What a rewrite may drop: the words that refer, and the function words around them.
_REFERRING_TEXT = """they them their theirs themselves it its he she his her him this these those
that both neither each either all none one of the former latter other others two three four
first second third last larger smaller older newer pair a an 's"""
_REFERRING = frozenset(_REFERRING_TEXT.split())
# What may join the referents a rewrite inserts ("Orville and Wilbur Wright").
_JOINERS = re.compile(r"\s*(?:\band\b|\bnor\b|\bor\b|\bof\b|\bthe\b|\ba\b|\ban\b|,|;)\s*", re.I)
_TOKEN = re.compile(r"\w+(?:[-']\w+)*|'s|[^\w\s]")

# "X; Y" and "X, and they Y": a new clause with its own subject after the break.
_SEMICOLON = re.compile(r";\s+")
_CLAUSE = re.compile(
    r",\s+(?:and|but)\s+(?=(?:it|they|he|she|this|these|those|its|their)\s+\w)", re.IGNORECASE
)


_SINGULAR = re.compile(r"\b(?:it|its|he|she|his|her|him)\b", re.IGNORECASE)
_NAME = re.compile(r"(?<!^)(?<![.!?]\s)\b[A-Z]")


def needs_context(claim: str) -> bool:
    """Whether ``claim`` may not stand alone: it holds a word that refers outside it (a
    singular pronoun counts only in a claim that names nothing after its first word)."""
    if any(p.search(claim) for p in _PATTERNS):
        return True
    return bool(_SINGULAR.search(claim)) and not _NAME.search(claim.strip())


def split_compound(claim: str) -> list[str]:
    """``claim`` split where it joins two facts: at "; " between two clauses of at least three
    words each, and at ", and" / ", but" followed by a new subject pronoun. Else unchanged."""
    parts = [claim]
    for pattern in (_SEMICOLON, _CLAUSE):
        parts = [piece for part in parts for piece in _split(part, pattern)]
    return parts


def _split(text: str, pattern: re.Pattern[str]) -> list[str]:
    pieces = [p.strip(" ,;") for p in pattern.split(text)]
    if len(pieces) < 2 or any(len(p.split()) < 3 for p in pieces):
        return [text]
    return [_sentence(p) for p in pieces]


def _sentence(text: str) -> str:
    text = text.strip()
    text = text[:1].upper() + text[1:]
    return text if text[-1:] in ".!?" else text + "."


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def accept_rewrite(original: str, rewrite: str, reference: str) -> bool:
    """Whether ``rewrite`` only resolves references of ``original``: the words it drops are
    reference words ("they", "the company"'s "the"), and each referent it inserts (split at
    "and", "nor", "of", commas; a possessive's "'s" dropped) appears verbatim in
    ``reference``. A rewrite that changes nothing is not a resolution."""
    a = [t.casefold() for t in _tokens(original)]
    b_raw = _tokens(rewrite)
    b = [t.casefold() for t in b_raw]
    if a == b or not b:
        return False
    inserted: list[str] = []
    dropped: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        dropped.extend(a[i1:i2])
        inserted.append(" ".join(b_raw[j1:j2]))
    # a dropped common noun of a definite description ("the company") is allowed when the
    # rewrite names it from the reference; any other dropped word is a changed fact
    kept = (w in _REFERRING or _is_punct(w) or _described(w, original) for w in dropped)
    if not all(kept):
        return False
    haystack = _norm(" ".join(_tokens(reference)))
    for span in inserted:
        for part in _JOINERS.split(span.replace(" 's", "").replace(" '", "")):
            part = part.strip()
            if part and not _is_punct(part) and f" {_norm(part)} " not in f" {haystack} ":
                return False
    return True


def _is_punct(text: str) -> bool:
    return not any(ch.isalnum() for ch in text)


def _described(word: str, original: str) -> bool:
    """``word`` is the noun of a definite description or demonstrative in ``original``
    ("the company", "this mission"): one that the rewrite may replace by a name."""
    pattern = rf"\b(?:the|this|these|those|that|its|their)\s+(?:\w+\s+)?{re.escape(word)}\b"
    return re.search(pattern, original, re.IGNORECASE) is not None


def decontext_chain(
    judge: BaseChatModel, prompt: ChatPromptTemplate = DECONTEXT_PROMPT
) -> Runnable[dict[str, Any], dict[str, Any]]:
    """LCEL: ``{"reference", "claims"}`` (numbered) -> ``{"raw", "parsed": Rewrites, ...}``."""
    return prompt | structured(judge, Rewrites)


def decontextualise(
    claims: Sequence[str], reference: str, chain: Runnable[Any, Any], usage: Usage
) -> Steps[list[str]]:
    """``claims`` split where compound, and those that do not stand alone rewritten by one
    judge call with ``reference`` as context; a rewrite is kept only if ``accept_rewrite``.
    A reply that does not give one rewrite per claim keeps every original."""
    split = [part for claim in claims for part in split_compound(claim)]
    flagged = [i for i, claim in enumerate(split) if needs_context(claim)]
    if not flagged:
        return split
    listed = "\n".join(f"{n}. {split[i]}" for n, i in enumerate(flagged, start=1))

    def check(parsed: Any) -> None:
        if len(parsed.claims) != len(flagged):
            raise JudgeError(f"expected {len(flagged)} rewritten claims, got {len(parsed.claims)}")

    try:
        reply = yield from ask(
            Call(chain, {"reference": reference, "claims": listed}), usage, check
        )
    except JudgeError:  # the claims stay as they were, and stay marked
        return split
    assert isinstance(reply.parsed, Rewrites)
    out = list(split)
    for i, rewrite in zip(flagged, reply.parsed.claims, strict=True):
        if isinstance(rewrite, str) and accept_rewrite(split[i], rewrite.strip(), reference):
            out[i] = rewrite.strip()
    return out
