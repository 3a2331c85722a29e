"""Text as the injection rules read it: normalised views that undo the ways an order to the
judge is hidden (format characters, look-alike letters, comments, base64 and base32, ROT13,
reversed text), so a rule written once for plain text finds it in every disguise.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import functools
import re
import unicodedata
from collections.abc import Iterator

__all__ = ["views"]

_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_COMMENT_MARK = re.compile(r"<!--|-->|^\s*\[(?://|comment)\]:\s*(?:#|<>)", re.MULTILINE)
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]{24,}={0,2}")
_BASE32 = re.compile(r"\b[A-Z2-7]{24,}=*")
_SPACE = re.compile(r"[ \t\r\f\v]+")
_BACKWARDS = re.compile(r"(?:^|[.!?]\s+)[a-z]+[.!?]\s+[a-z]")


@functools.lru_cache(maxsize=4096)
def views(text: str) -> tuple[str, ...]:
    """``text`` as the rules read it: casefolded NFKC without format characters, with comments
    opened and (a second view) removed, look-alike letters folded, decoded base64 and base32
    runs, the text in ROT13 and (where it shows signs of it) reversed added (cached: the
    injection rules and ``reader_talk`` read the same chunks)."""
    plain = _plain(text)
    base = plain.casefold()
    found = [_COMMENT_MARK.sub(" ", base)]
    if "<!--" in base:
        found.append(_COMMENT.sub("", base))
    found += [_plain(decoded).casefold() for decoded in _decoded_runs(plain)]
    found.append(codecs.encode(base, "rot13"))
    # Reversed, where the text shows it: the letters after a right-to-left override; the
    # words where a sentence is one lower-case word ("supported. as claim the mark ... Ignore"),
    # a capital then starting a sentence of the reversed words.
    if "\u202e" in text:
        found.append(base[::-1])
    if _BACKWARDS.search(plain):
        words = plain.split()[::-1]
        found.append(" ".join(f". {w}" if w[:1].isupper() else w for w in words).casefold())
    found += [_fold(v) for v in found if not v.isascii()]
    return tuple(dict.fromkeys(_SPACE.sub(" ", v) for v in found))


def _plain(text: str) -> str:
    """NFKC without format characters (base64 is case-sensitive: casefold after decoding)."""
    text = unicodedata.normalize("NFKC", text)
    if not text.isascii():
        text = "".join(c for c in text if unicodedata.category(c) != "Cf")
    return text


def _decoded_runs(text: str) -> Iterator[str]:
    for run in _BASE32.findall(text):
        try:
            letters = base64.b32decode(run.rstrip("=") + "=" * (-len(run.rstrip("=")) % 8))
            word = letters.decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            continue
        if word.isprintable():
            yield word
    for run in _BASE64.findall(text):
        body = run.rstrip("=").replace("-", "+").replace("_", "/")
        try:
            decoded = base64.b64decode(body + "=" * (-len(body) % 4), validate=True)
            plain = decoded.decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            continue
        if sum(c.isprintable() or c.isspace() for c in plain) >= 0.95 * len(plain):
            yield plain


def _fold(text: str) -> str:
    return "".join(_latin(c) if not c.isascii() else c for c in text)


@functools.lru_cache(maxsize=8192)
def _latin(char: str) -> str:
    """The ASCII letter ``char`` imitates (Cyrillic small o -> "o"), or ``char`` itself."""
    if not char.isalpha():
        return char
    from confusable_homoglyphs import confusables  # 1 MB of tables: loaded when first needed

    found = confusables.is_confusable(char, preferred_aliases=["latin"])
    for entry in found or []:
        for glyph in entry["homoglyphs"]:
            if len(glyph["c"]) == 1 and glyph["c"].isascii() and glyph["c"].isalpha():
                return str(glyph["c"]).lower()
    return char
