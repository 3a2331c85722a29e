"""What the trace readers share: a span (or LangSmith run) reduced to what a retrieval needs,
and the walk that finds the retrievals in a tree of them."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..safe import loads

__all__ = [
    "ANSWER_KEYS",
    "QUESTION_KEYS",
    "Document",
    "Retrieval",
    "Span",
    "dig",
    "retrievals",
    "text_in",
]

# Keys of a JSON input that hold the question, and of an output that hold the answer, in order.
QUESTION_KEYS = ("question", "query", "input", "user_input", "query_str")
ANSWER_KEYS = ("output", "answer", "response", "result")


@dataclass(frozen=True)
class Document:
    """One retrieved document as a span records it; any part may be missing."""

    id: str | None = None
    text: str | None = None
    score: float | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class Span:
    """A span or run: ``documents`` is None unless it is a retriever (then a list, maybe
    empty); ``attributes`` is where a join attribute is looked up (see ``dig``)."""

    trace: str
    id: str
    parent: str | None
    start: str  # sorts as text: zero-padded nanoseconds, or an ISO time
    input: str | None = None
    output: str | None = None
    documents: list[Document] | None = None
    attributes: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class Retrieval:
    """A retriever span with its documents, and the spans above it (nearest first)."""

    span: Span
    documents: list[Document]
    ancestors: list[Span]

    @property
    def root(self) -> Span:
        return self.ancestors[-1] if self.ancestors else self.span

    def attribute(self, name: str) -> Any:
        """``name`` on the retriever span, else on the nearest span above that has it."""
        for span in [self.span, *self.ancestors]:
            value = dig(span.attributes, name)
            if value is not None:
                return value
        return None


def retrievals(spans: Sequence[Span]) -> Iterator[Retrieval]:
    """The outermost retriever spans with documents, in start order: a retriever inside one
    that recorded documents is not counted twice; one that recorded none (an empty result,
    or a wrapper whose inner retriever holds them) gives way to the retrievers inside it,
    or, when none inside has documents, is an empty retrieval. The tree is walked without
    recursion (a trace may be any depth); a span met twice (two spans with one id) is
    walked once."""
    ids = {(span.trace, span.id) for span in spans}
    children: dict[tuple[str, str] | None, list[Span]] = {}
    for span in spans:
        parent = (span.trace, span.parent or "")
        children.setdefault(parent if parent in ids else None, []).append(span)  # orphan: a root
    for group in children.values():
        group.sort(key=lambda s: (s.start, s.id))
    above: dict[int, Span | None] = {}  # the span each one was reached from
    found: dict[int, list[Retrieval]] = {}
    roots = children.get(None, [])
    for root in roots:
        above[id(root)] = None
    stack: list[tuple[Span, bool]] = [(root, False) for root in reversed(roots)]
    while stack:
        span, expanded = stack.pop()
        kids = children.get((span.trace, span.id), [])
        if span.documents:
            found[id(span)] = [Retrieval(span, span.documents, _ancestors(span, above))]
            continue
        if not expanded:
            stack.append((span, True))
            for child in reversed(kids):
                if id(child) not in above:
                    above[id(child)] = span
                    stack.append((child, False))
            continue
        inner = [
            r for child in kids if above.get(id(child)) is span for r in found.pop(id(child), [])
        ]
        if span.documents is not None and not inner:
            inner = [Retrieval(span, [], _ancestors(span, above))]
        found[id(span)] = inner
    everything = [r for root in roots for r in found.get(id(root), [])]
    yield from sorted(everything, key=lambda r: r.span.start)


def _ancestors(span: Span, above: dict[int, Span | None]) -> list[Span]:
    """The spans above ``span``, nearest first."""
    out: list[Span] = []
    parent = above.get(id(span))
    while parent is not None:
        out.append(parent)
        parent = above.get(id(parent))
    return out


def dig(values: Mapping[str, Any], name: str) -> Any:
    """``values[name]``, else down a dotted path through mappings and JSON-object strings:
    ``metadata.sample_id`` reads ``sample_id`` from the attribute ``metadata`` (LangChain's
    config metadata, which OpenInference records as a JSON string)."""
    if name in values:
        return values[name]
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        head = ".".join(parts[:cut])
        if head in values:
            inner = _mapping(values[head])
            if inner is not None:
                found = dig(inner, ".".join(parts[cut:]))
                if found is not None:
                    return found
    return None


def text_in(value: Any, keys: Sequence[str]) -> str | None:
    """The text of an input or output: the text itself, or from a JSON object (or mapping)
    the value of the first of ``keys`` it has, else its only string value."""
    if isinstance(value, str):
        inner = _mapping(value) if value.lstrip().startswith("{") else None
        if inner is None:
            return value
        value = inner
    if not isinstance(value, Mapping):
        return None
    for key in keys:
        if isinstance(value.get(key), str):
            return str(value[key])
    strings = [v for v in value.values() if isinstance(v, str)]
    return strings[0] if len(strings) == 1 else None


def _mapping(value: Any) -> Mapping[str, Any] | None:
    if isinstance(value, Mapping):
        return value
    if isinstance(value, str):
        try:
            parsed = loads(value)
        except ValueError:
            return None
        return parsed if isinstance(parsed, Mapping) else None
    return None
