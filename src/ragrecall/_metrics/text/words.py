"""Evidence: check a judge's quote against the chunk it cites, or align a claim to a sentence.

A quote counts only if it is in a passage and states the claim (shares its content words).
Passages that address the judge are kept from it altogether (``injection.instructs_judge``).
"""

from __future__ import annotations

import bisect
import functools
import re
import threading
import unicodedata
from collections.abc import Sequence

import pysbd
from rapidfuzz import fuzz

__all__ = [
    "FUNCTION_WORDS",
    "best_sentence",
    "content_words",
    "normalize",
    "passages_quoting",
    "quote_in",
    "quote_states",
    "split_sentences",
    "word_overlap",
]

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
    fragments = _fragments(quote)
    return bool(fragments) and _in_order(_normalized(text), fragments, 0, None)


def passages_quoting(quote: str, texts: Sequence[str]) -> list[int]:
    """The indices of ``texts`` that hold ``quote`` (``quote_in``), in order, found with one
    search over all of them at once: the texts are normalised once (cached; every claim of a
    sample is checked against the same chunks) and joined, and each passage is examined at
    most once, so a quote costs about the length of the chunks, not claims x chunks checks."""
    fragments = _fragments(quote)
    if not fragments:
        return []
    if any(_SEPARATOR in f for f in fragments):
        return [i for i, text in enumerate(texts) if quote_in(quote, text)]
    joined, starts = _joined(tuple(texts))
    hits: list[int] = []
    position = 0
    while True:
        found = joined.find(fragments[0], position)
        if found < 0:
            return hits
        i = bisect.bisect_right(starts, found) - 1
        end = starts[i + 1] - 1 if i + 1 < len(starts) else len(joined)
        # The leftmost start leaves the most room for the other fragments: if they are not in
        # order after it, they are not after any later start in this passage either.
        if _in_order(joined, fragments[1:], found + len(fragments[0]), end):
            hits.append(i)
        position = end + 1


_SEPARATOR = "\x00"


def _fragments(quote: str) -> list[str]:
    fragments = [normalize(f).strip(_EDGE) for f in _ELLIPSIS.split(quote)]
    return [f for f in fragments if f]


def _in_order(haystack: str, fragments: Sequence[str], position: int, end: int | None) -> bool:
    for fragment in fragments:
        found = haystack.find(fragment, position, end)
        if found < 0:
            return False
        position = found + len(fragment)
    return True


@functools.lru_cache(maxsize=4096)
def _normalized(text: str) -> str:
    return normalize(text)


@functools.lru_cache(maxsize=16)
def _joined(texts: tuple[str, ...]) -> tuple[str, list[int]]:
    """The normalised texts joined by a separator no fragment holds, and where each starts."""
    starts, position, parts = [], 0, []
    for text in texts:
        part = _normalized(text)
        starts.append(position)
        parts.append(part)
        position += len(part) + len(_SEPARATOR)
    return _SEPARATOR.join(parts), starts


_WORD = re.compile(r"\w+")
_FUNCTION_WORDS = (
    "a an the and or but of in on at to for from by with as is are was were be been being it "
    "its this that these those there their they he she his her him we our you your i not no "
    "do does did has have had will would can could should may might than then so such"
)
FUNCTION_WORDS = frozenset(_FUNCTION_WORDS.split())


def content_words(text: str) -> set[str]:
    """The words of ``text`` (normalised) that carry content: all but ``FUNCTION_WORDS``."""
    return {w for w in _WORD.findall(normalize(text)) if w not in FUNCTION_WORDS}


def quote_states(quote: str, claim: str) -> bool:
    """The quote shares at least a third of the claim's content words (one at least): a quote
    such as "verified" or "this passage confirms the claim" states nothing."""
    wanted = content_words(claim)
    if not wanted:
        return True
    shared = len(wanted & content_words(quote))
    return shared >= 1 and 3 * shared >= len(wanted)


_local = threading.local()


def _segmenter() -> pysbd.Segmenter:
    """This thread's segmenter: pysbd keeps the text being split on the Segmenter itself
    (``original_text``), so one shared by threads mixes their texts up (sentences lost)."""
    segmenter: pysbd.Segmenter | None = getattr(_local, "segmenter", None)
    if segmenter is None:
        segmenter = _local.segmenter = pysbd.Segmenter(language="en", clean=False)
    return segmenter


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` (rule-based, no model call), stripped, empty ones dropped; in
    time linear in its length, a sentence that runs on past 4,000 characters cut at a space."""
    return list(_sentences(text))


@functools.lru_cache(maxsize=2048)
def _sentences(text: str) -> tuple[str, ...]:
    """Cached: every claim of a sample aligns against the same chunks (pysbd takes about a
    millisecond a chunk)."""
    if not text.strip():
        return ()
    return tuple(s.strip() for s in _segment(text) if s.strip())


# pysbd runs a regex substitution over the whole line for each abbreviation or list number it
# finds in it: quadratic in a line's length (one line of 0.2 MB took 38 s, 30 MB never ended).
# A longer text goes to it in windows of _PIECE characters: the sentences that end before the
# window's last _MARGIN characters are kept (what decides their ends lies inside the window),
# and the next window starts where the first one left out starts. A sentence that runs past
# _PIECE - _MARGIN characters is cut at a space.
_PIECE = 5_000
_MARGIN = 1_000


def _segment(text: str) -> list[str]:
    segment = _segmenter().segment
    out: list[str] = []
    pos = 0
    while len(text) - pos > _PIECE:
        window = text[pos : pos + _PIECE]
        kept, end = _kept(segment(window), window)
        if not end:  # no sentence ends early enough: cut the one that runs on at a space
            end = window.rfind(" ", 0, _PIECE - _MARGIN) + 1 or _PIECE - _MARGIN
            kept = [window[:end]]
        out += kept
        pos += end
    tail: list[str] = segment(text[pos:])
    return out + tail


def _kept(sentences: Sequence[str], window: str) -> tuple[list[str], int]:
    """The window's sentences that end before its margin, and where the last of them ends."""
    kept: list[str] = []
    at = end = 0
    for sentence in sentences:
        found = window.find(sentence, at)
        at = found + len(sentence)
        if found < 0 or at > _PIECE - _MARGIN:  # not found: pysbd changed it (never seen)
            break
        kept.append(sentence)
        end = at
    return kept, end


def word_overlap(claim: str, text: str) -> float:
    """The largest share of ``claim``'s content words found in one sentence of ``text``
    (1.0 for a claim without content words)."""
    wanted = content_words(claim)
    if not wanted:
        return 1.0
    return max(len(wanted & words) for words in _sentence_words(text)) / len(wanted)


@functools.lru_cache(maxsize=4096)
def _sentence_words(text: str) -> tuple[frozenset[str], ...]:
    """The content words of each sentence of ``text`` (cached, as ``_sentences``)."""
    return tuple(frozenset(content_words(s)) for s in _sentences(text) or (text,))


def best_sentence(claim: str, text: str) -> tuple[str, float]:
    """The sentence of ``text`` closest to ``claim`` and its similarity in [0, 100]."""
    best, best_score = "", -1.0
    for sentence in _sentences(text) or (text,):
        score = fuzz.token_set_ratio(claim, sentence, processor=normalize)
        if score > best_score:
            best, best_score = sentence, score
    return best, max(best_score, 0.0)
