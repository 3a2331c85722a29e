"""Split a reference's markdown structure (lists, tables, code) into units, before any model."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.tree import SyntaxTreeNode

from ..text.words import split_sentences
from .compound import split_compound

__all__ = ["Unit", "split_structure"]

_MD = MarkdownIt("commonmark").enable("table").disable("code")  # indented text stays prose
_LISTS = ("bullet_list", "ordered_list")

_STEP = re.compile(r"^(\s*)(?:[-*+•]\s+)?step\s+(\d{1,9})\s*[:.)\u2013-]\s*", re.IGNORECASE)
_BULLET = re.compile(r"^(\s*)[•◦▪\u2013]\s*")
_NUMBERED = re.compile(r"^\s*\d{1,9}[.)]\s")
_MARKER = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])(?:\s|$)")
_FENCE = re.compile(r"^\s*(```|~~~)")
_HOW = re.compile(r"^(?:(?:here|below|this)(?:\s+is|'s|\u2019s)\s+how|how(?=\s+to\s))\s+", re.I)
_TAIL = re.compile(
    r"(?:^|[\s,;]+)(?:(?:do|follow|complete|perform|take|with|using|through|via)\s+)?"
    r"(?:(?:the|these|this)\s+)?(?:following(?:\s+(?:steps|instructions))?|steps|instructions"
    r"|as\s+follows|below)$",
    re.IGNORECASE,
)
_LABEL = re.compile(r"^([^:;]{1,40}):\s+\S")  # "`sqlite`: the default"
# A line of code, configuration or markup, which no sentence is: it ends as code does, is a
# tag, a section, a setting (``key=value``; ``key: value`` with a key no label has: lowercase,
# dotted, dashed or camelCase), a TeX command, or opens with a keyword of code (lowercase, or
# SQL in capitals) and does not end as a sentence. Comments and indented lines go with it.
_CODE_LINE = re.compile(
    r"[{}\[(;]$|\\\\$|^<[^>]*>|<[^>]*>$|^\[[^\]]+\]$|^[\w.\-/@$\"']+\s*=(?!=)"
    r"|^(?:[a-z][\w.\-]*|\w*[_.\-][\w.\-]*|[a-z]+[A-Z]\w*|[A-Z][a-z]+[A-Z]\w*):(?:\s|$)"
    r"|^\\[a-zA-Z]+"
    r"|^(?:def|class|function|func|fn|export|import|from|const|let|var|return|type|message"
    r"|resource|syntax|package|struct|enum|interface|SELECT|INSERT|UPDATE|DELETE|CREATE|ALTER"
    r"|DROP|FROM|RUN|COPY|WORKDIR|USER|EXPOSE|CMD|ENTRYPOINT|ENV|ARG)\b.*[^.!?]$"
)
_COMMENT_LINE = re.compile(r"^(?:#|//|/\*|\*|--|%|;)")
_ENDED = re.compile(r"[.!?][\"')\u201d\u2019]?$")

_PURPOSE = {"to", "if", "when", "before", "after", "once", "for", "unless"}
_SUBJECTS = {"we", "the", "our", "this", "these", "it", "they", "you", "there", "a", "an", "i"}
_CONNECTIVE = {"as", "follows", "following", "the", "these", "this", "steps", "step", "are"}
_CONNECTIVE |= {"is", "here", "here's", "there", "below", "do", "then", "next", "and"}
_CONNECTIVE |= {"sequence", "process", "procedure", "order", "instructions"}
_LINKS = {"is", "are", "was", "were", "be", "include", "includes", "including", "need", "needs"}
_LINKS |= {"require", "requires", "support", "supports", "offer", "offers", "provide", "provides"}
_LINKS |= {"contain", "contains", "has", "have", "with", "by", "to", "of", "like", "as", "such"}
_LINKS |= {"use", "uses", "using", "allow", "allows", "lets", "can", "must", "should", "will"}
_LINKS |= {"install", "run", "set", "enable", "add", "create", "configure", "check", "choose"}
_LINKS |= {"especially", "particularly", "namely", "from", "for", "in", "on", "at", "about"}


@dataclass(frozen=True)
class Unit:
    """One statement or paragraph; ``structured`` when it needs no further splitting."""

    text: str
    structured: bool


def split_structure(reference: str) -> list[Unit]:
    """Deterministic pre-split of a reference's structure before any model sees it."""
    return list(_split(reference))


@functools.lru_cache(maxsize=2048)
def _split(reference: str) -> tuple[Unit, ...]:
    """Cached: a reference is split by decomposition, the rules and the dry run alike."""
    units = _blocks(SyntaxTreeNode(_MD.parse(_normalise(reference))).children)
    return tuple(Unit(unit.text.strip(), unit.structured) for unit in units if unit.text.strip())


def _normalise(text: str) -> str:
    """Rewrite "Step 1:", odd bullets, lists after a lead-in and prose right after a list."""
    out: list[str] = []
    in_code = in_item = False
    for line in text.splitlines():
        if _FENCE.match(line):
            in_code = not in_code
        elif not in_code:
            line = _BULLET.sub(r"\1- ", _STEP.sub(r"\1\2. ", line, count=1), count=1)
            last = out[-1].rstrip() if out else ""
            if _NUMBERED.match(line) and last.endswith(":") and not _MARKER.match(last):
                out.append("")  # any start number may then open the list
            elif (
                in_item
                and line[:1].strip()
                and not _MARKER.match(line)
                and (line[0].isupper() or last.endswith((".", "!", "?")))
            ):
                out.append("")  # prose after a list, not a wrapped item
            in_item = bool(_MARKER.match(line)) or (in_item and bool(line.strip()))
        out.append(line)
    return "\n".join(out)


def _blocks(nodes: list[SyntaxTreeNode]) -> list[Unit]:
    units: list[Unit] = []
    i = 0
    while i < len(nodes):
        node, after = nodes[i], nodes[i + 1] if i + 1 < len(nodes) else None
        kind = after.type if after else ""
        text = _inline(node).strip()
        if (
            after
            and node.type == "paragraph"
            and text.endswith(":")
            and kind in (*_LISTS, "table", "fence")
        ):
            *before, lead = split_sentences(text) or [text]
            units.append(Unit(" ".join(before), False))
            units += _led(lead.strip(), after)
            i += 1
        elif after and node.type == "heading" and kind in (*_LISTS, "table"):
            units += _list(after, "", text) if kind in _LISTS else _table(after, text)
            i += 1
        elif node.type in ("paragraph", "html_block"):
            body = node.content.strip() if node.type == "html_block" else text
            units.append(Unit(body, _is_code(body)))
        elif node.type in _LISTS:
            units += _list(node, "")
        elif node.type == "table":
            units += _table(node, "")
        elif node.type == "fence":
            code = _with_code("", node)
            if after and kind == "paragraph" and not _inline(after).strip().endswith(":"):
                code, i = f"{code}\n{_inline(after).strip()}", i + 1  # its explanation
            units.append(Unit(code, True))
        elif node.type == "blockquote":
            units += _blocks(node.children)
        i += 1
    return units


def _is_code(text: str) -> bool:
    """Whether a paragraph is a block of code, configuration or markup without a fence, to be
    kept whole as a fenced one is, with the line that leads into it ("Every response carries
    three headers:"): every other line code, a comment or indented, and two or more code. A
    small judge restates such a block badly ("The worker is configured to use 2GB of memory."
    for ``MemoryMax=2G``), and a passage that holds it states it word for word."""
    lines = [line for line in text.splitlines() if line.strip()]
    if lines and lines[0].endswith(":") and not _CODE_LINE.search(lines[0]):
        lines = lines[1:]  # the line that leads into it
    code = 0
    for line in lines:
        bare = line.strip()
        if _CODE_LINE.search(bare):
            code += 1
        elif not (_COMMENT_LINE.match(bare) or line[:1] in (" ", "\t")):
            return False
    return code >= 2


def _led(lead: str, node: SyntaxTreeNode) -> list[Unit]:
    """What a lead-in introduces: list items, a code block or table rows."""
    if node.type == "fence":
        return [Unit(_with_code(lead, node), True)]
    words = _clean_lead(lead).lower().split()
    # A stating lead-in ("The plan has three phases:") is its own unit; "Our plans:" is a
    # label and "The Pro plan includes:" a link, no statement.
    states = bool(words) and words[-1] not in _LINKS and words[0] in _SUBJECTS and len(words) > 3
    if node.type in _LISTS:  # each item keeps the lead-in as context
        return ([Unit(_finish(lead), False)] if states else []) + _list(node, lead)
    if not words or words[-1] in _LINKS:  # a table drops a linking lead-in,
        return _table(node, "")
    if states:
        return [Unit(_finish(lead), False), *_table(node, "")]
    return _table(node, _clean_lead(lead))  # and a label prefixes each row


def _list(node: SyntaxTreeNode, lead: str, heading: str = "") -> list[Unit]:
    if int(node.attrs.get("start", 1)) >= 100 and not lead:  # a year opening prose, not a list
        return [Unit(f"{it.info}{it.markup} {_item_text(it)}", False) for it in node.children]
    return [unit for item in node.children for unit in _item(item, lead, heading)]


def _item(item: SyntaxTreeNode, lead: str, heading: str) -> list[Unit]:
    """An item with its lead-in folded in (a compound item split first, ``_split_item``); a
    parent of a nested list is lead-in to each child, and a unit of its own unless it ends
    with ":" ("Phase 2: Pilot" states a fact; "If the cluster is new:" introduces one)."""
    raw = _item_text(item)
    heading = "" if _ENDED.search(raw) else heading  # fragments take the heading as context
    text = _fold(raw, lead, heading)
    fences = [c for c in item.children if c.type == "fence"]
    for fence in fences:
        text = _with_code(text, fence)
    nested = [c for c in item.children if c.type in _LISTS]
    units = [u for child in nested for u in _list(child, text or lead)]
    others = [c for c in item.children if c.type not in (*_LISTS, "paragraph", "fence")]
    single = sum(c.type == "paragraph" for c in item.children) < 2
    if nested and (not raw or raw.endswith(":")):
        own = []
    elif fences or not single:
        own = [Unit(text if fences else _finish(text), single)]
    else:
        own = [Unit(_finish(_fold(piece, lead, heading)), True) for piece in _split_item(raw)]
    return own + units + _blocks(others)


def _split_item(text: str) -> list[str]:
    """An item's text split like a claim (``split_compound``); a label that opens the item
    ("`sqlite`: the default; stores data ...") opens each later piece too."""
    parts = split_compound(text)
    label = _LABEL.match(text)
    if label is None or len(parts) < 2:
        return parts
    name = label.group(1)
    return parts[:1] + [
        p if p.startswith(f"{name}:") else f"{name}: {_lower(p)}" for p in parts[1:]
    ]


def _fold(text: str, lead: str, heading: str) -> str:
    if lead:
        return _join(lead, text)
    return f"{heading}: {text}" if heading and text else text


def _item_text(item: SyntaxTreeNode) -> str:
    parts = (_inline(c) for c in item.children if c.type == "paragraph")
    return re.sub(r"\s*\n\s*", " ", " ".join(parts)).strip()


def _table(node: SyntaxTreeNode, label: str) -> list[Unit]:
    """One statement per cell, named by its row's first cell: "Plan Pro: Price $10." (a row
    with one cell is the statement itself)."""
    rows = [[_inline(c).strip() for c in row.children] for row in node.walk() if row.type == "tr"]
    head, prefix = (rows or [[]])[0], f"{label}: " if label else ""
    units = []
    for row in rows[1:]:
        key = " ".join(x for x in (head[0] if head else "", row[0] if row else "") if x)
        named = zip(head[1:], row[1:], strict=False)
        cells = [" ".join(x for x in (h, c) if x) for h, c in named if c]
        texts = [f"{key}: {cell}" for cell in cells] if cells else [key]
        units += [Unit(_finish(prefix + text), True) for text in texts if text]
    return units


def _with_code(sentence: str, fence: SyntaxTreeNode) -> str:
    """A single line joins its sentence as inline code; a block is kept verbatim."""
    code = fence.content.strip("\n")
    if not code.strip():
        return _finish(sentence)
    if "\n" in code or not sentence:
        block = f"{fence.markup}{fence.info}\n{code}\n{fence.markup}"
        return f"{sentence}\n{block}" if sentence else block
    code = code.strip()
    span = f"`` {code} ``" if "`" in code else f"`{code}`"
    return _finish(f"{sentence.rstrip().removesuffix(':')} {span}".strip())


def _clean_lead(lead: str) -> str:
    """Drop connective text: "Here's how", "follow these steps", ", the steps are"."""
    lead = _HOW.sub("", lead.strip().rstrip(":.").strip())
    clauses = _TAIL.sub("", lead).split(",")
    while clauses and all(word.lower() in _CONNECTIVE for word in clauses[-1].split()):
        clauses.pop()
    lead = ",".join(clauses).strip()
    return lead[:1].upper() + lead[1:]


def _join(lead: str, item: str) -> str:
    """Fold a lead-in into an item: "To X, item", "X includes item" or "Label: Item"."""
    sentence = lead.rstrip().endswith((".", "!", "?"))
    lead = _clean_lead(lead)
    if not lead or not item:
        return item or lead
    clause = lead.rsplit(",", 1)[-1].lower().split()
    if lead.lower().split()[-1] in _LINKS and not sentence:
        return f"{lead} {_lower(item)}"
    if (clause[0] in _PURPOSE or clause[:3] == ["in", "order", "to"]) and not sentence:
        return f"{lead}, {_lower(item)}"
    return f"{lead}: {item}"


def _lower(text: str) -> str:
    """Lowercase the first letter unless the first word is an acronym, a name or code."""
    first = text.split(maxsplit=1)[0]
    if not first[:1].isupper() or first[1:] != first[1:].lower() or first == "I":
        return text
    return text[0].lower() + text[1:]


def _finish(text: str) -> str:
    """End with terminal punctuation; a trailing ":", "," or ";" becomes "."."""
    text = text.rstrip().rstrip(":,;").rstrip()
    return text if not text or _ENDED.search(text.rstrip("*_")) else f"{text}."


def _inline(node: SyntaxTreeNode) -> str:
    return node.children[0].content if node.children and node.children[0].type == "inline" else ""
