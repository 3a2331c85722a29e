"""Compound claims split by rule, with no judge: "X; Y", "X, while Y" and "X, and they Y" hold
two facts, and one missing fact must not hide behind the other. Used on the judge's claims
(``decontext``) and on list items (``structure``)."""

from __future__ import annotations

import re

__all__ = ["split_compound"]

_SEMICOLON = re.compile(r";\s+")
# A new clause after the break: its own subject pronoun, or a contrast ("while", "whereas").
_CLAUSE = re.compile(
    r",\s+(?:and|but)\s+(?=(?:it|they|he|she|this|these|those|its|their)\s+\w)"
    r"|,\s+(?:while|whereas)\s+",
    re.IGNORECASE,
)
# "X was renewed and its Y was enabled": a possessive subject with its own verb, split only
# after a clause with a verb of its own ("The company and its unit were fined" stays whole).
_VERB = r"\b(?:is|are|was|were|has|have|had)\b"
_POSSESSIVE_CLAUSE = re.compile(
    rf"\s+and\s+(?=(?:its|their|his|her)\s+(?:[\w-]+\s+){{1,2}}{_VERB})", re.IGNORECASE
)
_MIN_WORDS = 3  # a piece shorter than this is no fact of its own ("see below")


def split_compound(claim: str) -> list[str]:
    """``claim`` split where it joins two facts: at "; ", ", while" / ", whereas", ", and" /
    ", but" before a subject pronoun, and "and its X was" after a clause with a verb, when
    every piece has at least three words. Else unchanged."""
    parts = [claim]
    for pattern in (_SEMICOLON, _CLAUSE, _POSSESSIVE_CLAUSE):
        parts = [piece for part in parts for piece in _split(part, pattern)]
    return parts


def _split(text: str, pattern: re.Pattern[str]) -> list[str]:
    pieces = [p.strip(" ,;") for p in pattern.split(text)]
    if len(pieces) < 2 or any(len(p.split()) < _MIN_WORDS for p in pieces):
        return [text]
    if pattern is _POSSESSIVE_CLAUSE and not re.search(_VERB, pieces[0], re.IGNORECASE):
        return [text]
    return [_sentence(p) for p in pieces]


def _sentence(text: str) -> str:
    text = text.strip()
    text = text[:1].upper() + text[1:]
    return text if text[-1:] in ".!?" else text + "."
