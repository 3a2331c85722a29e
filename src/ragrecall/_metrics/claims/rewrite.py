"""Whether a claim's rewrite only resolves its references: the checks ``decontext`` applies to
the referent the judge names (``fits``) and to the claim it makes (``accept_rewrite``)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

__all__ = ["PLURAL_PRONOUNS", "accept_rewrite", "fits"]

# Words that point outside the claim wherever they stand.
PLURAL_PRONOUNS = r"they|them|their|theirs|themselves"

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
_PLURAL_WORDS = frozenset(PLURAL_PRONOUNS.split("|")) | {"both", "neither", "these", "those"}
# What may join the referents a rewrite inserts ("Orville and Wilbur Wright").
_JOINERS = re.compile(r"\s*(?:\band\b|\bnor\b|\bor\b|\bof\b|\bthe\b|\ba\b|\ban\b|,|;)\s*", re.I)
_TOKEN = re.compile(r"\w+(?:[-']\w+)*|'s|[^\w\s]")
_OWNER = re.compile(r"'s?$")  # a possessive's ending


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
    # possessives dropped word by word on both sides ("Gustave Eiffel's company")
    target = [
        _OWNER.sub("", w) for w in _norm(re.sub(r"^the\s+", "", name.strip(), flags=re.I)).split()
    ]
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
