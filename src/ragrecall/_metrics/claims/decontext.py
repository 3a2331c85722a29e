"""Claims that stand alone: compound claims split by rule, references resolved by the judge.

After the judge splits a reference, a claim may still lean on its neighbours ("They stopped
touring in 1966.", "The company entered mobile phones.") and be judged against passages about
another "they". Three steps, in order:

1. ``compound.split_compound``: "X; Y", "X, while Y" and "X, and they Y" become two claims
   (rule, no judge).
2. ``needs_context``: a rule finds the claims that do not stand alone (a plural or leading
   pronoun, a demonstrative, a definite description such as "the company", a quantified
   reference such as "neither of them"); a claim that stands alone costs nothing.
3. ``decontextualise``: for each flagged claim, one short judge call names what its referring
   words ("they", "the company") stand for, with the reference as context; the library puts
   the name in their place. The rewrite is kept only if the name fits the words
   (``rewrite.fits``: a plural or a name for "they", a name for "the company"), appears
   verbatim in the reference, and nothing else changed (``rewrite.accept_rewrite``);
   otherwise the original stays, and ``needs_context`` keeps marking it. (A small judge asked
   to rewrite whole claims mostly copies them back unchanged: naming the referent is the
   smaller task.)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable

from ragrecall._core.errors import JudgeError
from ragrecall._core.schemas import Usage
from ragrecall._judge.drive import Call, Steps, ask
from ragrecall._judge.structured import structured

from ..prompts import DECONTEXT_PROMPT, Referent
from .compound import split_compound
from .rewrite import PLURAL_PRONOUNS, accept_rewrite, fits

__all__ = [
    "decontext_chain",
    "decontextualise",
    "needs_context",
    "referring_span",
    "resolved",
]

# Words that point outside the claim at its start (a claim's own subject, unnamed).
_LEADING = (
    r"it|its|he|she|his|her|this|these|those|that|(?:both|neither|each|all|either)(?!\s+of\b)"
)
# "the first" alone ("They named the first after ..."), not "the first computer program"
_ALONE = (
    r"(?=\s*(?:[,.;:]|$)|\s+(?:after|before|in|on|at|by|for|with|to|from|and|but|or|was|were|is"
    r"|are|has|have|had|can|could|will|would|of|[a-z]+s|[a-z]+ed)\b)"
)
_ORDINAL = (
    r"(?:former|latter|other|others|two|three|four|first|second|third|last|larger|smaller"
    r"|older|newer|pair)"
)
_QUANTIFIED = (
    r"(?:neither|both|each|either|all|none|one|some|most)\s+of\s+(?:them|these|those|the\s+two)"
    rf"|the\s+{_ORDINAL}\b{_ALONE}"
    r"|all\s+(?:two|three|four|five)\b"
)
_DEMONSTRATIVE = r"(?:this|these|those)\s+[a-z]"
_PATTERNS = [
    re.compile(rf"\b(?:{PLURAL_PRONOUNS})\b", re.IGNORECASE),
    re.compile(rf"^\W*(?:{_LEADING})\b", re.IGNORECASE),
    re.compile(rf"\b(?:{_QUANTIFIED})", re.IGNORECASE),
    re.compile(rf"\b{_DEMONSTRATIVE}", re.IGNORECASE),
    # a definite description as subject: "The company ...", not "The Golden Gate Bridge ..."
    re.compile(r"^\W*[Tt]he\s+[a-z][a-z-]*\b(?!\s+(?:of|in|at|for|from)\b)"),
]


# What follows "these" / "those" used as a pronoun: punctuation, the end, or a verb.
_PRONOUN_NEXT = (
    r"\s*(?:[,.;:]|$)|\s+(?:was|were|is|are|has|have|had|can|could|will|would|did|do|does"
    r"|may|might|must|should|also|still|never|[a-z]+ed)\b"
)
# The words a referent replaces, most specific first (group 1: the span).
_SPANS = [
    # "these" / "those" as pronouns, not determiners ("either of these sleep positions")
    re.compile(
        r"\b(?:neither|both|each|either|all|none|one|some|most)\s+of\s+"
        rf"(them|(?:these|those)(?={_PRONOUN_NEXT}))\b",
        re.I,
    ),
    re.compile(
        r"\b((?:the|this|these|those|that)\s+(?:former|latter|other|others|two|three|four|"
        r"first|second|third|last|larger|smaller|older|newer|pair)"
        rf"(?:\s+of\s+(?:the\s+two|them|these|those))?)\b{_ALONE}",
        re.I,
    ),
    re.compile(r"\b((?:this|these|those)\s+[a-z][a-z-]*)\b", re.I),
    re.compile(r"^\W*((?:all|both)\s+(?:two|three|four|five))\b", re.I),
    # "the first number": the ordinal's noun belongs to the description
    re.compile(rf"^\W*([Tt]he\s+(?:{_ORDINAL}\s+)?[a-z][a-z-]*)\b(?!\s+(?:of|in|at|for|from)\b)"),
    re.compile(r"\b(they|them|their|theirs|themselves)\b", re.I),
    re.compile(
        r"^\W*(it|its|he|she|his|her|this|these|those|that|both|neither|each|all|either)\b", re.I
    ),
    re.compile(r"\b(it|its|he|she|his|her|him)\b", re.I),
]
_POSSESSIVE = frozenset({"its", "their", "theirs", "his", "her"})


_SINGULAR = re.compile(r"\b(?:it|its|he|she|his|her|him)\b", re.IGNORECASE)
_NAME = re.compile(r"(?<!^)(?<![.!?]\s)\b[A-Z]")


def needs_context(claim: str) -> bool:
    """Whether ``claim`` may not stand alone: it holds a word that refers outside it (a
    singular pronoun counts only in a claim that names nothing after its first word)."""
    if any(p.search(claim) for p in _PATTERNS):
        return True
    return bool(_SINGULAR.search(claim)) and not _NAME.search(claim.strip())


def referring_span(claim: str) -> tuple[int, int] | None:
    """Where in ``claim`` the first word (or description) that refers outside it stands."""
    if not needs_context(claim):
        return None
    for pattern in _SPANS:
        found = pattern.search(claim)
        if found:
            return found.start(1), found.end(1)
    return None


def resolved(claim: str, span: tuple[int, int], referent: str) -> str:
    """``claim`` with ``span`` replaced by ``referent`` (a possessive keeps its "'s")."""
    start, end = span
    words = claim[start:end]
    text = referent.strip().rstrip(".")
    if words.lower() in _POSSESSIVE:
        text += "'" if text.endswith("s") and words.lower() == "their" else "'s"
    if start == 0 or not claim[:start].strip(" \"'("):
        text = text[:1].upper() + text[1:]
    return claim[:start] + text + claim[end:]


def decontext_chain(
    judge: BaseChatModel, prompt: ChatPromptTemplate = DECONTEXT_PROMPT
) -> Runnable[dict[str, Any], dict[str, Any]]:
    """LCEL: ``{"reference", "claim", "words"}`` -> ``{"raw", "parsed": Referent, ...}``,
    the reply capped at REFERENT_REPLY_TOKENS."""
    return prompt | structured(judge, Referent, max_tokens=REFERENT_REPLY_TOKENS)


# A referent is a few words of the reference.
REFERENT_REPLY_TOKENS = 100
# A claim may hold two references ("They named the first ..."): each is asked for in turn.
_MAX_SPANS = 2


def decontextualise(
    claims: Sequence[str], reference: str, chain: Runnable[Any, Any], usage: Usage
) -> Steps[list[str]]:
    """``claims`` split where compound, then each that does not stand alone resolved: the
    judge names what its referring words stand for (one short call each, the reference as
    context), the words are replaced, and the result is kept only if the referent ``fits`` the
    words and ``accept_rewrite`` holds (the referent verbatim in ``reference``, nothing else
    changed). Otherwise the claim stays."""
    out = [part for claim in claims for part in split_compound(claim)]
    for i, claim in enumerate(out):
        for _ in range(_MAX_SPANS):
            span = referring_span(claim)
            if span is None:
                break
            words = claim[span[0] : span[1]]
            call = Call(chain, {"reference": reference, "claim": claim, "words": words})
            try:
                reply = yield from ask(call, usage)
            except JudgeError:
                break
            assert isinstance(reply.parsed, Referent)
            referent = reply.parsed.referent
            rewrite = resolved(claim, span, referent)
            fitting = fits(words, referent, reference)
            if not fitting or not accept_rewrite(claim, rewrite, reference):
                break
            claim = rewrite
        out[i] = claim
    return out
