"""Does an answer hold the kind of information its question asks for? A rule on the words:
a question asking when needs a time in its answer (a digit, a month, a season, a century, ...),
one asking how many or how much needs a quantity. Other questions pass: a rule cannot tell a
place or a person from other words in every language. It catches the commonest slip of a
small judge: taking a passage on the same subject for an answer."""

from __future__ import annotations

import re

__all__ = ["lacks_answer_type"]

_WHEN = re.compile(
    r"^\s*(?:when\b|(?:in |on |at )?what (?:year|date|day|month|time|century|decade|era|age"
    r"|period)\b|how long ago\b|since when\b|until when\b)",
    re.IGNORECASE,
)
_HOW_MUCH = re.compile(
    r"^\s*(?:how (?:many|much|old|long|far|big|large|tall|high|deep|heavy|wide|often|fast)\b"
    r"|what (?:percentage|proportion|share|fraction|number|amount)\b)",
    re.IGNORECASE,
)
_MONTHS = (
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec"
)
_TIME_WORDS = (
    "monday tuesday wednesday thursday friday saturday sunday spring summer autumn fall winter "
    "century centuries decade decades year years ago era age period dynasty reign bc bce ad ce "
    "today yesterday tomorrow morning evening night noon midnight week weeks month months day "
    "days hour hours minute minutes during before after since until war later earlier early "
    "late medieval ancient modern recently currently now first second third last"
)
_TIME = frozenset((_MONTHS + " " + _TIME_WORDS).split())
_NUMBERS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty "
    "ninety hundred hundreds thousand thousands million millions billion billions trillion "
    "dozen dozens several few many half quarter third twice once double triple none no all "
    "most some percent majority minority"
)
_NUMBER_WORDS = frozenset(_NUMBERS.split())
_WORD = re.compile(r"[a-z]+")
_DIGIT = re.compile(r"\d")


def lacks_answer_type(question: str, answer: str) -> str:
    """Why ``answer`` cannot answer ``question`` by its kind ("" if it may): a question that
    asks when with no time in the answer, or how many or how much with no quantity."""
    words = set(_WORD.findall(answer.lower()))
    if _WHEN.search(question) and not (_DIGIT.search(answer) or words & _TIME):
        return "the question asks when, and the answer states no time"
    if _HOW_MUCH.search(question) and not (_DIGIT.search(answer) or words & _NUMBER_WORDS):
        return "the question asks how much or how many, and the answer states no quantity"
    return ""
