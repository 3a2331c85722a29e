"""Evidence: check a judge's quote against the chunk it cites, or align a claim to a sentence."""

from __future__ import annotations

import functools
import re
import unicodedata

import pysbd
from rapidfuzz import fuzz

__all__ = ["best_sentence", "normalize", "quote_in", "split_sentences"]

_SPACE = re.compile(r"\s+")
_ELLIPSIS = re.compile(r"\s*(?:\.\.\.|…)\s*")
_TRANSLATE = str.maketrans(
    {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-"}
)
_EDGE = " \t\n\"'.,;:!?()[]"


def normalize(text: str) -> str:
    """Case-, width-, quote- and whitespace-insensitive form of ``text``."""
    text = unicodedata.normalize("NFKC", text).translate(_TRANSLATE).casefold()
    return _SPACE.sub(" ", text).strip()


def quote_in(quote: str, text: str) -> bool:
    """True if every ``...``-separated fragment of ``quote`` occurs, in order, in ``text``."""
    haystack = normalize(text)
    position = 0
    fragments = [normalize(f).strip(_EDGE) for f in _ELLIPSIS.split(quote)]
    fragments = [f for f in fragments if f]
    if not fragments:
        return False
    for fragment in fragments:
        found = haystack.find(fragment, position)
        if found < 0:
            return False
        position = found + len(fragment)
    return True


@functools.lru_cache(maxsize=1)
def _segmenter() -> pysbd.Segmenter:
    return pysbd.Segmenter(language="en", clean=False)


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` (rule-based, no model call), stripped, empty ones dropped."""
    if not text.strip():
        return []
    sentences = _segmenter().segment(text)
    return [s.strip() for s in sentences if s.strip()]


def best_sentence(claim: str, text: str) -> tuple[str, float]:
    """The sentence of ``text`` closest to ``claim`` and its similarity in [0, 100]."""
    best, best_score = "", -1.0
    for sentence in split_sentences(text) or [text]:
        score = fuzz.token_set_ratio(claim, sentence, processor=normalize)
        if score > best_score:
            best, best_score = sentence, score
    return best, max(best_score, 0.0)
