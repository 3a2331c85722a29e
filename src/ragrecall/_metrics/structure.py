"""Split a reference's markdown structure (lists, tables, code) into units, before any model."""

from __future__ import annotations

import re
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.tree import SyntaxTreeNode

__all__ = ["Unit", "split_structure"]

_MD = MarkdownIt("commonmark").enable("table").disable("code")  # indented text stays prose
_LISTS = ("bullet_list", "ordered_list")

_STEP = re.compile(r"^(\s*)(?:[-*+•]\s+)?step\s+(\d{1,9})\s*[:.)–-]\s*", re.IGNORECASE)
_BULLET = re.compile(r"^(\s*)[•◦▪–]\s*")
_NUMBERED = re.compile(r"^\s*\d{1,9}[.)]\s")
_FENCE = re.compile(r"^\s*(```|~~~)")
_HOW = re.compile(r"^(?:here|below|this)(?:\s+is|'s|’s)\s+how\s+", re.IGNORECASE)
_TAIL = re.compile(
    r"(?:^|[\s,;]+)(?:(?:do|follow|complete|perform|take|with|using|through|via)\s+)?"
    r"(?:(?:the|these|this)\s+)?(?:following(?:\s+(?:steps|instructions))?|steps|instructions"
    r"|as\s+follows|below)$",
    re.IGNORECASE,
)
_ENDED = re.compile(r"(?:[.!?]|[.!?][\"'”’)]|`)$")

_PURPOSE = {"to", "if", "when", "before", "after", "once", "for", "unless"}
_CONNECTIVE = {"as", "follows", "following", "the", "these", "this", "steps", "step", "are"}
_CONNECTIVE |= {"is", "here", "here's", "there", "below", "do", "then", "next", "and"}
_LINKS = {"is", "are", "was", "were", "be", "include", "includes", "including", "need", "needs"}
_LINKS |= {"require", "requires", "support", "supports", "offer", "offers", "provide", "provides"}
_LINKS |= {"contain", "contains", "has", "have", "with", "by", "to", "of", "like", "as", "such"}
_LINKS |= {"use", "uses", "using", "allow", "allows", "lets", "can", "must", "should", "will"}
_LINKS |= {"install", "run", "set", "enable", "add", "create", "configure", "check", "choose"}


@dataclass(frozen=True)
class Unit:
    """One statement or paragraph; ``structured`` when it needs no further splitting."""

    text: str
    structured: bool


def split_structure(reference: str) -> list[Unit]:
    """Deterministic pre-split of a reference's structure before any model sees it."""
    tree = SyntaxTreeNode(_MD.parse(_normalise(reference)))
    return _blocks(tree.children)


def _normalise(text: str) -> str:
    """Rewrite forms CommonMark does not know: "Step 1:", "•"/"–" bullets, lists after a lead-in."""
    out: list[str] = []
    in_code = False
    for line in text.splitlines():
        if _FENCE.match(line):
            in_code = not in_code
        elif not in_code:
            line = _BULLET.sub(r"\1- ", _STEP.sub(r"\1\2. ", line, count=1), count=1)
            if _NUMBERED.match(line) and out and out[-1].rstrip().endswith(":"):
                out.append("")  # any start number may then open the list
        out.append(line)
    return "\n".join(out)


def _blocks(nodes: list[SyntaxTreeNode]) -> list[Unit]:
    units: list[Unit] = []
    for i, node in enumerate(nodes):
        after = nodes[i + 1].type if i + 1 < len(nodes) else ""
        if node.type == "paragraph":
            units += _paragraph(_inline(node), nodes[i + 1] if after else None)
        elif node.type in _LISTS and not (i and _is_lead(nodes[i - 1])):
            units += _list(node, "")
        elif node.type == "table":
            units += _table(node)
        elif node.type == "fence" and not (i and nodes[i - 1].type == "paragraph"):
            units += [Unit(_with_code("", node), True)] if node.content.strip() else []
        elif node.type == "blockquote":
            units += _blocks(node.children)
        elif node.type == "html_block" and node.content.strip():
            units.append(Unit(node.content.strip(), False))
    return units


def _paragraph(text: str, after: SyntaxTreeNode | None) -> list[Unit]:
    """A prose paragraph, or its last line used as a lead-in, a table caption or a code intro."""
    before, _, last = text.rpartition("\n")
    units = [Unit(before.strip(), False)] if before.strip() else []
    kind = after.type if after else ""
    if after is not None and kind in _LISTS and last.rstrip().endswith(":"):
        return units + _list(after, last)
    if kind == "table" and last.rstrip().endswith(":"):
        return units + ([Unit(_finish(last), False)] if _states(last) else [])
    if after is not None and kind == "fence":
        return units + [Unit(_with_code(last.strip(), after), True)]
    return [Unit(text.strip(), False)] if text.strip() else []


def _is_lead(node: SyntaxTreeNode) -> bool:
    return node.type == "paragraph" and _inline(node).rstrip().endswith(":")


def _list(node: SyntaxTreeNode, lead: str) -> list[Unit]:
    if int(node.attrs.get("start", 1)) >= 100 and not lead:  # a year opening prose, not a list
        return [Unit(f"{it.info}{it.markup} {_item_text(it)}", False) for it in node.children]
    return [unit for item in node.children for unit in _item(item, lead)]


def _item(item: SyntaxTreeNode, lead: str) -> list[Unit]:
    """A list item with its lead-in folded in; a parent of a nested list is lead-in to each child."""
    text = _join(lead, _item_text(item))
    for fence in (c for c in item.children if c.type == "fence"):
        text = _with_code(text, fence)
    nested = [c for c in item.children if c.type in _LISTS]
    units = [u for child in nested for u in _list(child, text or lead)]
    others = [c for c in item.children if c.type not in (*_LISTS, "paragraph", "fence")]
    return ([] if nested or not text else [Unit(_finish(text), True)]) + units + _blocks(others)


def _item_text(item: SyntaxTreeNode) -> str:
    parts = (_inline(c) for c in item.children if c.type == "paragraph")
    return re.sub(r"\s*\n\s*", " ", " ".join(parts)).strip()


def _table(node: SyntaxTreeNode) -> list[Unit]:
    """One "Header: cell; Header: cell." unit per data row, left for a model to phrase."""
    rows = [[_inline(cell).strip() for cell in row.children] for row in node.walk() if row.type == "tr"]
    if not rows:
        return []
    head, body = rows[0], rows[1:]
    pairs = ([f"{h}: {c}" if h else c for h, c in zip(head, row) if c] for row in body)
    return [Unit(_finish("; ".join(cells)), False) for cells in pairs if cells]


def _with_code(sentence: str, fence: SyntaxTreeNode) -> str:
    code = fence.content.rstrip("\n")
    if not code.strip():
        return sentence
    if "\n" in code:
        block = f"{fence.markup}{fence.info}\n{code}\n{fence.markup}"
        return f"{sentence}\n{block}" if sentence else block
    span = f"`` {code} ``" if "`" in code else f"`{code}`"
    return f"{sentence} {span}".strip()


def _clean_lead(lead: str) -> str:
    """Drop connective text: "Here's how", "follow these steps", "The steps are"."""
    lead = _HOW.sub("", lead.strip().rstrip(":").strip())
    lead = _TAIL.sub("", lead).rstrip(" ,;")
    if all(word.lower() in _CONNECTIVE for word in lead.split()):
        return ""
    return lead[:1].upper() + lead[1:]


def _join(lead: str, item: str) -> str:
    """Fold a lead-in into an item: "To X, item", "X includes item" or "Label: Item"."""
    sentence = lead.rstrip().endswith((".", "!", "?"))
    lead = _clean_lead(lead).rstrip(".")
    if not lead or not item:
        return item
    words = lead.lower().split()
    if words[-1] in _LINKS and not sentence:
        return f"{lead} {_lower(item)}"
    if words[0] in _PURPOSE and "," not in lead and not sentence:
        return f"{lead}, {_lower(item)}"
    return f"{lead}: {item}"


def _states(lead: str) -> bool:
    """Whether a table's lead-in says something of its own ("Pricing tiers:" does not)."""
    words = _clean_lead(lead).lower().split()
    return len(words) >= 3 and words[0] not in _PURPOSE and words[-1] not in _LINKS


def _lower(text: str) -> str:
    """Lowercase the first letter unless the first word looks like an acronym, a name or code."""
    words = text.split(maxsplit=2)
    first = words[0]
    named = len(words) > 1 and (words[1][:1].isupper() or words[1][:1].isdigit())
    if not first[:1].isupper() or first[1:] != first[1:].lower() or first == "I" or named:
        return text
    return text[0].lower() + text[1:]


def _finish(text: str) -> str:
    """End with terminal punctuation; a trailing ":", "," or ";" becomes "."."""
    text = text.rstrip().rstrip(":,;").rstrip()
    return text if not text or _ENDED.search(text.rstrip("*_")) else f"{text}."


def _inline(node: SyntaxTreeNode) -> str:
    return node.children[0].content if node.children else ""
