"""Grounding: may this evidence support this claim? A check of the evidence and the chunk it
was found in, not of the judge's word, so an attack that sways the judge still fails here.

A supported verdict rests on evidence found verbatim in a shown chunk (the judge's quote, or
the sentence the library aligned). ``evidence_refusal`` then says why that evidence cannot count:

- it addresses the judge: the sentences that hold it give orders to the reader, imitate a
  verdict or a chat or function-call transcript (``injection.instructs_judge``, on those
  sentences only: an honest report that quotes an attack elsewhere still counts);
- it repeats the claim (most of the claim's content words) inside a chunk that gives the
  judge orders in its own voice (``redaction.redact`` withholds it whole; one that only
  quotes an order is not refused for it), or beside an order in hidden HTML.

``not_plain`` says what keeps a chunk from being plain prose: hidden characters (Unicode tags,
bidirectional overrides, private-use characters; not zero-width spaces or direction marks,
which the rules read through), encoded runs (hex, base64, base32, percent, quoted-printable,
entity, escape, octal, Ascii85, binary, Braille or Morse codes), disguised letters (full-width,
mathematical, leetspeak, letters spaced out, shifted), text in another language than the
claim's outside quotation marks, or machine layout (JSON with a turn that says something or a
tool call, markup tags, key-value or log lines, code, subtitles, one-letter lines). An order
the rules cannot read hides in such a chunk, so a verdict given with one in view is asked
again with it out of view (``quarantine.py``); the chunk's own statements still count, as
technical documentation's must. No word list of attacks decides this: it is a property of the
form.

The figures (attacks held, honest support kept) are in ``benchmarks/injection.py --obedient``.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from ..text.injection import instructs_judge
from ..text.language import in_english
from ..text.redaction import HIDDEN, redact
from ..text.words import FUNCTION_WORDS, normalize, split_sentences

__all__ = ["evidence_refusal", "not_plain"]

_WORD = re.compile(r"\w+")
# How much of the claim a repetition holds.
_COPY = 0.75


def evidence_refusal(claim: str, evidence: str, text: str) -> str:
    """Why ``evidence``, found in the chunk ``text``, cannot support ``claim``; "" if it can."""
    if not evidence.strip():
        return ""
    found = normalize(evidence)
    held = [s for s, n in _normal_sentences(text) if n and (n in found or found in n)]
    if instructs_judge(" ".join(held) or evidence):
        return "the evidence addresses the judge"
    wanted = _words(normalize(claim))
    repeated = max((len(wanted & w) for w in _sentence_words(text)), default=0)
    if wanted and max(len(wanted & _words(found)), repeated) >= _COPY * len(wanted):
        shown = redact(text)
        why = "orders to the judge" if shown is None else "hidden text" if HIDDEN in shown else ""
        if why:
            return f"the evidence repeats the claim in a chunk with {why}"
    return ""


@functools.lru_cache(maxsize=2048)
def _normal_sentences(text: str) -> tuple[tuple[str, str], ...]:
    """Each sentence of ``text`` and its normalised form (cached: every claim of a sample is
    checked against the same chunks)."""
    return tuple((s, normalize(s)) for s in split_sentences(text))


@functools.lru_cache(maxsize=2048)
def _words(normalized: str) -> set[str]:
    """``evidence.content_words`` of text already normalised."""
    return {w for w in _WORD.findall(normalized) if w not in FUNCTION_WORDS}


def _sentence_words(text: str) -> tuple[set[str], ...]:
    return tuple(_words(n) for _, n in _normal_sentences(text))


# --- plain prose ----------------------------------------------------------------------------

_HIDDEN_RANGES = ((0xE0000, 0xE007F), (0x202A, 0x202E), (0x2066, 0x2069), (0xE000, 0xF8FF))
_ENCODED = re.compile(
    r"(?<![\w/.-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{24,}(?![\w/-])"  # hex
    r"|(?:%[0-9a-f]{2}){4,}|(?:=[0-9a-f]{2}){4,}|(?:&#x?[0-9a-f]+;){4,}|(?:\\u[0-9a-f]{4}){3,}"
    r"|(?:\b[01]{8}\b\s*){4,}|<~[^~]{8,}~>|(?:\\[0-7]{3}){4,}"
    r"|(?:\b(?=[0-9a-f]*[a-f])[0-9a-f]{2}\b[ :]+(?:[0-9a-f]{2}\b[ :]*){7,})"
    r"|\b(?:fromCharCode|chr|unhexlify|b64decode|atob)\s*\("
    r"|[\u2800-\u28ff]{4,}|(?:(?<!\S)[.\-\u2022\u2013]{1,6}(?:\s+/)?\s+){8,}"  # braille, Morse
    r"|(?<![\w/.-])(?=[a-z0-9+/]*\d)(?=[a-z0-9+/]*[a-z])[a-z0-9+/]{24,}={0,2}(?![\w/-])",
    re.IGNORECASE,
)
_BASE32 = re.compile(r"(?<![\w/.-])[A-Z2-7]{24,}={0,6}(?![\w/-])")
# Words run together by percent codes, in a link or not (a link's own ids are not read as
# codes: the other patterns read the text without its links).
_PERCENT = re.compile(r"(?:%[0-9a-f]{2}\w*){4,}", re.IGNORECASE)
# Digits for the letters they look like (0 1 3 4 5 7), not a formula's or a part number's.
_LEET = re.compile(
    r"\b(?=\w*[a-z]\w*\d\w*[a-z]|\w*\d\w*[a-z]\w*\d)(?![a-z0-9]*[2689])[a-z0-9]{4,}\b", re.I
)
_SPACED = re.compile(r"(?:\b\w[\s.*_-]){8,}")
# Letters shifted or scrambled: lower-case words of three letters or more with no vowel.
_VOWELLESS = re.compile(r"\b[b-df-hj-np-tv-xz]{3,}\b")
_URL = re.compile(r"\S+://\S+|\bwww\.\S+")
# HTML's elements (a web page's markup is plain enough; a made-up tag is not).
_HTML = (
    "a|abbr|address|article|aside|audio|b|blockquote|body|br|button|caption|cite|code|dd|del"
    "|details|dfn|div|dl|dt|em|figcaption|figure|footer|form|h[1-6]|head|header|hr|html|i|iframe"
    "|img|input|ins|kbd|label|li|link|main|mark|meta|nav|noscript|ol|option|p|picture|pre|q|s"
    "|samp|section|select|small|source|span|strong|sub|summary|sup|table|tbody|td|textarea"
    "|tfoot|th|thead|time|title|tr|u|ul|var|video|wbr|center|font"
)
_LAYOUT = re.compile(
    # A transcript's turn that says something, a tool call's arguments, a script's JSON keys.
    r"[{,]\s*[\"'](?:content|arguments|tool_calls?|@type|@context|input|tool_use)[\"']\s*:\s*(?!null\b)"
    r"|\"type\"\s*:\s*\"(?:tool_use|function|tool_call)\""
    r"|<(?!/?(?:" + _HTML + r")\b)/?[a-z][\w:-]*(?:\s[^<>]*)?/?>"  # tags that are not HTML's
    r"|<script\b|\bstyle=[\"'][^\"']*display:\s*none|<[^<>]*\shidden[\s>=]"  # scripts, hidden
    # key=value pairs (not sums, 2 x 8=16, nor a URL's query, ?item=1&tpk=2)
    r"|(?<![?&;])\b[A-Za-z_]\w+=\w+\b.*(?<![?&;])\b[A-Za-z_]\w+=\w+\b"
    r"|^\s*(?:def|return|var|let|const|function|import)\s+[\w(]"  # code
    r"|(?:^|\s)(?:\#|//)[ \t]+[A-Za-z]|(?:^|[}\s])%\s+[a-z]"  # comments
    r"|\d\d:\d\d:\d\d[,.]\d+\s*-->|\d{4}-\d\d-\d\dt\d\d:\d\d"  # subtitles, log lines
    r"|(?:^\s*\S{1,2}\s*$\n){4,}",  # one letter a line
    re.MULTILINE,
)


@functools.lru_cache(maxsize=4096)
def not_plain(text: str, english: bool = True) -> str:
    """What keeps ``text`` from being plain prose (in English, or in any language); "" if
    nothing."""
    if any(_hidden(c) for c in text):
        return "hidden characters"
    linkless = _URL.sub(" ", text)
    if _ENCODED.search(linkless) or _BASE32.search(linkless) or _PERCENT.search(text):
        return "encoded text"
    if _SPACED.search(text) or any(_disguised(s) for s in split_sentences(text)):
        return "disguised letters"
    if _LAYOUT.search(text):
        return "machine layout"
    if english and not in_english(text):
        return "text in another language"
    return ""


def _disguised(sentence: str) -> bool:
    """A sentence of disguised letters: full-width or mathematical ones (three or more),
    leetspeak (four words or more), or words no language writes (a Caesar shift). Counted in
    one sentence: an order needs them together, and an honest page scatters a few (A1C, ᵗʰ)."""
    compat = sum(
        1
        for c in sentence
        if c.isalnum() and not c.isascii() and unicodedata.normalize("NFKC", c).isascii()
    )
    if compat >= 3 or len({w.casefold() for w in _LEET.findall(sentence)}) >= 4:
        return True
    linkless = _URL.sub(" ", sentence)
    odd = _VOWELLESS.findall(linkless)
    return len(odd) >= 4 and len(odd) >= 0.3 * len(_WORD.findall(linkless))


def _hidden(char: str) -> bool:
    """A character that hides text: a Unicode tag (text no font shows), a bidirectional
    override or isolate (shown in another order than it is read), a private-use character.
    Other format characters (zero-width spaces, joiners, direction marks) hide nothing: the
    rules read through them."""
    code = ord(char)
    return any(lo <= code <= hi for lo, hi in _HIDDEN_RANGES)
