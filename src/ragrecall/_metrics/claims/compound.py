"""Compound claims split by rule, with no judge: "X; Y", "X, while Y", "X, and they Y" and
"Remove X and swap in Y" hold two facts, and one missing fact must not hide behind the other.
Used on the judge's claims (``decontext``) and on list items (``structure``)."""

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
# "Remove the lug nuts and swap in the spare": two instructions, when the claim opens with a
# verb of instructions and another follows "and" ("Add salt and pepper", "Add 50 g of flour and
# 50 g of water" and "Press and hold the button" stay whole).
_INSTRUCTION_WORDS = """
    add adjust apply approve ask attach bake boil bring call cancel check choose clean clear
    click close collect commit confirm connect contact cook copy cover create cut delete
    deploy disable disconnect download drain drink drop dry eat enable enter file fill find
    fold follow fry grease heat install keep leave let lift log look loosen lower measure
    mix mount move notify open park pay place plug pour preheat press print pull push put
    raise read record register reload remove rename repeat replace restart restore return
    review rinse run save scan schedule select send serve set shut sign slide start stir
    stop store submit swap switch tag take tap tell test tighten turn type unplug update
    upload use verify visit wait wash whisk wipe write
"""
_INSTRUCTIONS = frozenset(_INSTRUCTION_WORDS.split())
_INSTRUCTION = re.compile(rf"\s+and\s+(?=(?:{'|'.join(sorted(_INSTRUCTIONS))})\s)", re.IGNORECASE)
_MIN_WORDS = 3  # a piece shorter than this is no fact of its own ("see below")


def split_compound(claim: str) -> list[str]:
    """``claim`` split where it joins two facts: at "; ", ", while" / ", whereas", ", and" /
    ", but" before a subject pronoun, "and its X was" after a clause with a verb, and "and"
    between two instructions, when every piece has at least three words. Else unchanged."""
    parts = [claim]
    for pattern in (_SEMICOLON, _CLAUSE, _POSSESSIVE_CLAUSE, _INSTRUCTION):
        parts = [piece for part in parts for piece in _split(part, pattern)]
    return parts


def _split(text: str, pattern: re.Pattern[str]) -> list[str]:
    pieces = [p.strip(" ,;") for p in pattern.split(text)]
    if len(pieces) < 2 or any(len(p.split()) < _MIN_WORDS for p in pieces):
        return [text]
    if pattern is _POSSESSIVE_CLAUSE and not re.search(_VERB, pieces[0], re.IGNORECASE):
        return [text]
    if pattern is _INSTRUCTION and pieces[0].split()[0].lower() not in _INSTRUCTIONS:
        return [text]  # the claim must open with an instruction too
    return [_sentence(p) for p in pieces]


def _sentence(text: str) -> str:
    text = text.strip()
    text = text[:1].upper() + text[1:]
    return text if text[-1:] in ".!?" else text + "."
