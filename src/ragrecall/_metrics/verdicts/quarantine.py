"""A second look: a "supported" verdict given while a passage that could hide an order was in
view counts only if the judge, shown the window with that out of view, says so again.

An order the rules can read is cut out or withheld before the judge reads a chunk
(``redaction``). One they cannot read hides in a chunk that is not plain prose (another
language, an encoding, hidden characters, machine layout: ``grounding.not_plain``), in what
is left of a redacted chunk, or in plain English that tells the reader what to accept
(``reader_talk``). A judge it sways can call any claim supported and cite any passage, so no
check of the cited text alone tells obedience from support: the library's evidence for a
near miss ("Seoul is the capital of South Korea" for "Busan is the capital of South Korea")
shares most of the claim's words.

The second look shows the judge the window again with what could hold an order out of view:
each suspect passage without its sentences that could hold one (the sentence that holds the
evidence cut to the part of it that matches the claim; for an English claim, without the
letters of other scripts), a passage that could still hold one (an order spread over lines)
left out, or, if it holds the evidence, cut to that part, which must then state the claim in
its own words. That is the window as it would read without the order, so the second verdict,
checked the same way, decides as the judge would have without it. Passages in plain prose, as
on the shared datasets, never need it (benchmarks/security/injection.py).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from typing import Any

from rapidfuzz import fuzz

from ragrecall._core.schemas import ClaimVerdict
from ragrecall._judge.drive import Reply, Steps

from ..decision import Decision
from ..prompts import Passage, PassageRenderer
from ..text.injection import instructs_judge
from ..text.language import in_english
from ..text.reader_talk import talks_to_reader
from ..text.redaction import HIDDEN, QUOTED
from ..text.windows import Window
from ..text.words import normalize, quote_states, split_sentences
from .decide import Evidence, verdict_of
from .grounding import not_plain

__all__ = ["cleared", "second_look", "suspects"]

Ask = Callable[[dict[str, Any]], Steps[Reply]]


def _suspect(text: str, english: bool) -> str:
    """Why ``text`` could hold an order the rules cannot read; "" if it cannot."""
    if QUOTED in text or HIDDEN in text or instructs_judge(text):
        return "an order was cut out of it"
    if talks_to_reader(text):
        return "it tells its reader what to accept"
    why = not_plain(text, english=english)
    return f"it is not plain prose: {why}" if why else ""


def suspects(window: Window, text: str) -> str:
    """Which passage of ``window`` could hold an order the rules cannot read, for a claim or
    question ``text``, and why ("passage 2 was in view (...)"); "" if none."""
    english = in_english(text)
    for passage in window:
        if why := _suspect(passage.text, english):
            return f"passage {passage.number} was in view ({why})"
    return ""


def cleared(window: Window, text: str, evidence: str, chunk_id: str) -> Window | None:
    """``window`` as the second look shows it, for the claim or question ``text`` whose
    ``evidence`` the judge found in chunk ``chunk_id``: every passage without its sentences
    that could hold an order (the sentence that holds the evidence cut to the part of it that
    matches ``text``); a passage that could still hold one (an order spread over lines) left
    out, or if it holds the evidence, cut to that part, which must then state ``text`` in its
    own words (None if it does not)."""
    english = in_english(text)
    shown: Window = []
    for passage in window:
        holds = passage.chunk.id == chunk_id
        kept = _cleaned(text, passage.text, evidence if holds else "", english)
        if _suspect(kept, english):
            if not holds:
                continue
            kept = _matching(text, evidence, english)
            if not quote_states(kept, text):
                return None
        if kept.strip():
            shown.append(Passage(passage.number, passage.chunk, kept))
    return shown


def second_look(
    claim: str,
    verdict: ClaimVerdict,
    window: Window,
    *,
    ask_one: Ask,
    evidence: Evidence,
    decision: Decision,
    render: PassageRenderer,
) -> Steps[ClaimVerdict]:
    """``verdict`` (supported) as it stands if no passage of ``window`` is suspect; otherwise
    the judge is asked again with what could hold an order out of view (``cleared``), and
    that verdict decides."""
    if not verdict.attributed:
        return verdict
    where = suspects(window, claim)
    if not where:
        return verdict
    if not verdict.chunk_ids or not verdict.evidence:
        return _refused(verdict, f"it cited no evidence to check, and {where}")
    seen = cleared(window, claim, verdict.evidence, verdict.chunk_ids[0])
    if seen is None:
        return _refused(verdict, f"its evidence does not state the claim, and {where}")
    reply = yield from ask_one({"passages": render(seen), "claim": claim})
    again = verdict_of(claim, reply, seen, evidence, decision)
    if again.attributed:
        return verdict.model_copy(
            update={"reason": f"{verdict.reason}; confirmed with it out of view, as {where}"}
        )
    return _refused(verdict, f"not with what could hold an order out of view, and {where}")


def _cleaned(claim: str, text: str, evidence: str, english: bool) -> str:
    """``text`` without its sentences that could hold an order; the one that holds
    ``evidence`` becomes the part of the evidence that matches the claim."""
    if not _suspect(text, english):
        return text
    found = normalize(evidence)
    kept = []
    for sentence in split_sentences(text):
        if not _suspect(sentence, english):
            kept.append(sentence)
        elif found and ((held := normalize(sentence)) in found or found in held):
            kept.append(_matching(claim, evidence, english))
    return " ".join(kept)


def _matching(claim: str, evidence: str, english: bool) -> str:
    """The part of ``evidence`` that matches ``claim``; for an English claim (``english``),
    without the letters of other scripts."""
    return _span(claim, _latin(evidence) if english else evidence)


def _latin(text: str) -> str:
    """``text`` without the letters of other scripts than Latin: an English claim is not
    stated in them, and an order in another script sharing the sentence is left out of view."""
    kept = (
        " " if unicodedata.category(c)[0] in "LM" and "LATIN" not in unicodedata.name(c, "") else c
        for c in text
    )
    return " ".join("".join(kept).split())


def _span(claim: str, text: str) -> str:
    """The part of ``text`` that best matches ``claim`` (as long as the claim, to whole words):
    an order that shares the evidence's sentence stays out of view."""
    found = fuzz.partial_ratio_alignment(claim, text, processor=str.casefold)
    if found is None or len(text) <= len(claim):
        return text
    start = text.rfind(" ", 0, found.dest_start) + 1
    end = text.find(" ", found.dest_end)
    return text[start : end if end >= 0 else len(text)].strip()


def _refused(verdict: ClaimVerdict, why: str) -> ClaimVerdict:
    return verdict.model_copy(
        update={
            "attributed": False,
            "evidence_verified": False,
            "reason": f"the judge said supported, but {why}",
            "confidence": None if verdict.p_supported is None else 1 - verdict.p_supported,
        }
    )
