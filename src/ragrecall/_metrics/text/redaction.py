"""Redaction: take out of a chunk the text that addresses the judge, and keep the rest.

An honest security report that quotes an attack, or API docs that show a verdict-shaped JSON
object, state facts beside the quoted order. Withholding the whole chunk loses those facts;
showing it lets the order reach the judge. So the smallest parts that carry the order are
removed, and the judge reads the rest:

- a part that only *shows* text, flagged on its own by ``injection.instructs_judge`` (text in
  quotation marks, a JSON object, an HTML element, a table or a markdown comment inside a line
  of prose), is replaced by ``QUOTED`` (``HIDDEN`` for an HTML element that hides its text):
  the chunk reports an order, as a write-up does;
- if what remains still addresses the judge, the chunk gives the order in its own voice (a
  sentence, an aside, a comment, an order spread over lines, signs that only count together)
  and is withheld whole: none of its text reaches the judge.

Beside a cut, the claim's own words prove nothing (an attack plants them there): the word
check reads only passages nothing was cut from (``window_overlap``).
"""

from __future__ import annotations

import functools
import re

from ragrecall._core.schemas import Chunk

from .injection import instructs_judge
from .windows import Window
from .words import word_overlap

__all__ = ["HIDDEN", "QUOTED", "redact", "redact_chunks", "window_overlap"]

QUOTED = "[quoted instructions removed]"
# An HTML element that hides its text (display:none, hidden): a write-up may show one, but an
# attack plants its claim beside it, so evidence that repeats the claim next to one does not
# count (``grounding.evidence_refusal``).
HIDDEN = "[hidden text removed]"

# The parts that show text rather than say it: a markdown comment or a table inside a line
# of prose (a comment that hides text, and a table of the document's own, start a line), an
# HTML element, quotation marks (not a CSV field's or an attribute's value). Asides in
# parentheses or brackets and HTML comments are the author's own voice, not shown text.
_PARTS = (
    re.compile(r"(?<=\S)[ \t]*\[(?://|comment)\]:\s*(?:#|<>)\s*\([^()\n]*\)"),
    re.compile(r"^(?P<prose>[^|\n]*[^\s|])(?P<shown>[ \t]*\|[^\n]*\|)", re.MULTILINE),
    re.compile(
        r"<(?P<tag>[a-z][\w-]*)\b(?P<attributes>[^<>]*)>[^<>]*</(?P=tag)\s*>", re.IGNORECASE
    ),
    re.compile(
        r"(?<![,;\t=])\"[^\"\n]*\"|“[^”\n]*”|«[^»\n]*»|「[^」\n]*」|『[^』\n]*』|„[^“”\n]*[“”]"
    ),
)
_WORD = re.compile(r"\w")


@functools.lru_cache(maxsize=4096)
def redact(text: str) -> str | None:
    """``text`` with the parts that address the judge removed (see the module docstring);
    ``text`` itself if none does; None if the chunk must be withheld whole."""
    if not instructs_judge(text):
        return text
    for part in _PARTS:
        text = part.sub(_replace_if_flagged, text)
    text = _objects(text)
    if instructs_judge(text) or not _WORD.search(text.replace(QUOTED, " ").replace(HIDDEN, " ")):
        return None
    return text


def redact_chunks(chunks: list[Chunk]) -> tuple[list[Chunk], str]:
    """The chunks with the text that addresses the judge removed (``redact``), and
    a note that names the chunks redacted and withheld ("" if none)."""
    kept: list[Chunk] = []
    redacted: list[str] = []
    withheld: list[str] = []
    for chunk in chunks:
        text = redact(chunk.text)
        if text is None:
            withheld.append(chunk.id)
        elif text != chunk.text:
            redacted.append(chunk.id)
            kept.append(chunk.model_copy(update={"text": text}))
        else:
            kept.append(chunk)
    notes = []
    if redacted:
        notes.append(
            f"chunks {redacted} address the judge; that text was removed before it read them"
        )
    if withheld:
        notes.append(f"chunks {withheld} address the judge; they were not shown to it")
    return kept, "; ".join(notes)


def _replace_if_flagged(match: re.Match[str]) -> str:
    found = match.groupdict()
    shown = found.get("shown") or match.group()
    if not instructs_judge(shown):
        return match.group()
    hides = _HIDES.search(found.get("attributes") or "")
    return (found.get("prose") or "") + (HIDDEN if hides else QUOTED)


_HIDES = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden|\shidden\b|font-size\s*:\s*0")


def _objects(text: str) -> str:
    """``text`` with each flagged JSON object (braces matched, nested or not) replaced."""
    out: list[str] = []
    start, depth = -1, 0
    last = 0
    for i, char in enumerate(text):
        if char == "{":
            if depth == 0:
                start = i
            depth += 1
        elif char == "}" and depth:
            depth -= 1
            if depth == 0 and instructs_judge(text[start : i + 1]):
                out.append(text[last:start] + QUOTED)
                last = i + 1
    out.append(text[last:])
    return "".join(out)


def window_overlap(claim: str, window: Window) -> float:
    """The word check's reading of a window: the claim's largest share of content words in
    one sentence of a passage that nothing was cut from. Beside an order cut out of a chunk
    (where an attack plants the claim's very words) the judge's own reading decides."""
    return max(
        (
            word_overlap(claim, p.text)
            for p in window
            if QUOTED not in p.text and HIDDEN not in p.text
        ),
        default=0.0,
    )
