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
   the name in their place. The rewrite is kept only if the name fits the words (``fits``: a
   plural or a name for "they", a name for "the company"), appears verbatim in the reference,
   and nothing else changed (``accept_rewrite``); otherwise the original stays, and
   ``needs_context`` keeps marking it. (A small judge asked to rewrite whole claims mostly
   copies them back unchanged: naming the referent is the smaller task.)
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
from ..prompts import DECONTEXT_PROMPT, Referent
from .compound import split_compound

__all__ = [
    "accept_rewrite",
    "decontext_chain",
    "decontextualise",
    "fits",
    "needs_context",
    "referring_span",
    "resolved",
]

# Words that point outside the claim wherever they stand.
_PLURAL = r"they|them|their|theirs|themselves"
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
# What a referent may not be: a pronoun resolves nothing.
_PRONOUNS = frozenset(
    {"i", "you", "we", "me", "us", "it", "its", "he", "she", "him", "her", "his", "they", "them"}
    | {"their", "this", "that", "these", "those", "one", "ones", "your", "our", "my"}
)
# Words that are capitalised without being names.
_FUNCTION = frozenset({"the", "a", "an", "our", "its", "their", "this", "that", "these", "those"})
# Referring words that need a plural referent (or a name: "they" for a company).
_PLURAL_WORDS = frozenset(_PLURAL.split("|")) | {"both", "neither", "these", "those"}
# What may join the referents a rewrite inserts ("Orville and Wilbur Wright").
_JOINERS = re.compile(r"\s*(?:\band\b|\bnor\b|\bor\b|\bof\b|\bthe\b|\ba\b|\ban\b|,|;)\s*", re.I)
_TOKEN = re.compile(r"\w+(?:[-']\w+)*|'s|[^\w\s]")
_OWNER = re.compile(r"'s?$")  # a possessive's ending

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


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def accept_rewrite(original: str, rewrite: str, reference: str) -> bool:
    """Whether ``rewrite`` only resolves references of ``original``: the words it drops are
    reference words ("they", "the company"'s "the"), and each referent it inserts (split at
    "and", "nor", "of", commas; a possessive's "'s" dropped) appears verbatim in
    ``reference``. A rewrite that changes nothing or inserts nothing is not a resolution, nor
    one whose referent the claim already names ("Its name comes from Monty Python." does not
    become "Monty Python's name comes from Monty Python."), nor one that puts a referent beside
    the words it repeats ("The new emergency wing" does not become "New emergency wing
    emergency wing")."""
    a = [t.casefold() for t in _tokens(original)]
    b_raw = _tokens(rewrite)
    b = [t.casefold() for t in b_raw]
    if a == b or not b or _repeats(b) > _repeats(a):
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
    if not all(kept) or not any(not _is_punct(span) for span in inserted):
        return False
    haystack = _norm(" ".join(_tokens(reference)))
    for span in inserted:
        name = span.replace(" 's", "").replace(" '", "")
        if _says(original, name):
            return False
        for part in _JOINERS.split(name):
            part = _OWNER.sub("", part.strip())
            if part and not _is_punct(part) and f" {_norm(part)} " not in f" {haystack} ":
                return False
    return True


def fits(words: str, referent: str, reference: str) -> bool:
    """Whether ``referent`` can be what ``words`` refer to: not empty and not a pronoun; for
    plural words ("they", "both", "these jobs"), a name or a plural ("A and B", "the jobs");
    for a description ("the company", "this mission"), a name or a phrase with its noun ("the
    Rosetta mission"), not another description ("the hospital" for "the staff"). A name is a
    capitalised word that ``reference`` never writes in lower case."""
    tokens = [t for t in _tokens(referent.strip()) if not _is_punct(t)]
    folded = {t.casefold() for t in tokens}
    if not folded or folded <= _PRONOUNS:
        return False
    lowered = [w.casefold() for w in _tokens(words)]
    named = any(
        t[:1].isupper()
        and t.casefold() not in _FUNCTION
        and not re.search(rf"\b{re.escape(t.lower())}\b", reference)
        for t in tokens
    )
    if _PLURAL_WORDS.intersection(lowered):
        plural = "and" in folded or any(
            len(t) > 3 and t.endswith("s") and not t.endswith("ss") for t in folded
        )
        if not (named or plural):
            return False
    nouns = [w for w in lowered[1:] if w not in _REFERRING]
    if lowered[0] in {"the", "this", "these", "those", "that"} and nouns:
        return named or nouns[-1] in folded
    return True


def _repeats(tokens: Sequence[str]) -> int:
    """How many times a run of one to four words follows itself ("emergency wing emergency
    wing"): a referent put beside the words it repeats."""
    return sum(
        tokens[i : i + n] == tokens[i + n : i + 2 * n]
        for n in range(1, 5)
        for i in range(len(tokens) - 2 * n + 1)
        if not _is_punct(" ".join(tokens[i : i + n]))
    )


def _says(claim: str, name: str) -> bool:
    """Whether ``claim`` already says ``name`` (whole words, any case, "the" and a possessive
    aside), other than inside a longer capitalised name ("Python" in "Monty Python")."""
    target = _norm(re.sub(r"^the\s+|'s?$", "", name.strip(), flags=re.I)).split()
    words = [_OWNER.sub("", t) for t in _tokens(claim)]
    n = len(target)
    for i in range(len(words) - n + 1):
        if [w.casefold() for w in words[i : i + n]] != target:
            continue
        before = words[i - 1] if i > 0 else ""
        after = words[i + n] if i + n < len(words) else ""
        inside = (i > 1 and before[:1].isupper()) or after[:1].isupper()
        if not inside:
            return True
    return False


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
