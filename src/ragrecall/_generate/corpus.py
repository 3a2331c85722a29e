"""A corpus as chunks: read from a folder of .txt/.md/.html files, a JSONL of documents, or
LangChain ``Document`` s and LlamaIndex nodes; chunked into sentence windows, or kept as given.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from .._core.errors import SampleError
from .._core.schemas import Chunk
from .._io.safe import lines, loads, regular_file
from .._metrics.text.words import split_sentences

__all__ = ["TEXT_SUFFIXES", "Document", "chunk_documents", "read_corpus", "to_documents"]

TEXT_SUFFIXES = (".txt", ".md", ".markdown", ".html", ".htm")

Document = Chunk  # a whole document: id, text, metadata (the same record as a chunk)


def read_corpus(path: str | Path) -> list[Document]:
    """The documents of a folder (its text, Markdown and HTML files, recursively, by path;
    a document's id is its path inside the folder) or of a JSONL file (one object a line:
    ``id``, ``text``, optional ``metadata``). A bad file or row raises SampleError naming it."""
    path = Path(path)
    if path.is_dir():
        return _folder(path)
    if not path.exists():
        raise SampleError("no such file or folder", file=str(path))
    regular_file(path, "corpus")
    return _jsonl(path)


def _folder(root: Path) -> list[Document]:
    files = sorted(p for p in root.rglob("*") if p.suffix.lower() in TEXT_SUFFIXES and p.is_file())
    if not files:
        raise SampleError(f"no {', '.join(TEXT_SUFFIXES)} files in this folder", file=str(root))
    docs = []
    for file in files:
        try:
            raw = file.read_text(encoding="utf-8")
        except UnicodeDecodeError as err:
            raise SampleError(f"not UTF-8 text (byte {err.start})", file=str(file)) from err
        text = _html_text(raw) if file.suffix.lower() in (".html", ".htm") else raw
        if text.strip():  # an empty file holds nothing to ask about
            name = file.relative_to(root).as_posix()
            docs.append(Document(id=name, text=text.strip(), metadata={"source": name}))
    if not docs:
        raise SampleError("every file in this folder is empty", file=str(root))
    return docs


def _jsonl(path: Path) -> list[Document]:
    docs: list[Document] = []
    seen: dict[str, int] = {}
    with path.open("rb") as f:
        for number, raw in lines(f, path):
            if not raw.strip():
                continue
            try:
                row = loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as err:
                raise SampleError(f"not a JSON object: {err}", file=str(path), line=number) from err
            doc = _row_document(row, file=str(path), line=number)
            if doc.id in seen:
                raise SampleError(
                    f"id {doc.id!r} is also on line {seen[doc.id]}; ids must be unique",
                    file=str(path),
                    line=number,
                    field="id",
                )
            seen[doc.id] = number
            docs.append(doc)
    if not docs:
        raise SampleError("no documents in this file", file=str(path))
    return docs


def _row_document(
    row: Any, *, file: str | None = None, line: int | None = None, index: int | None = None
) -> Document:
    def bad(message: str, field: str | None = None) -> SampleError:
        where = f"corpus item {index}: " if index is not None else ""
        return SampleError(where + message, file=file, line=line, field=field)

    if not isinstance(row, Mapping):
        raise bad(f"expected a JSON object with id and text, got {type(row).__name__}")
    doc_id, text, metadata = row.get("id"), row.get("text"), row.get("metadata", {})
    if isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)) or str(doc_id) == "":
        raise bad("missing or not a string or integer", "id")
    if not isinstance(text, str) or not text.strip():
        raise bad("missing, empty or not a string", "text")
    if not isinstance(metadata, Mapping):
        raise bad("not a JSON object", "metadata")
    return Document(id=str(doc_id), text=text.strip(), metadata=dict(metadata))


def to_documents(items: Iterable[Any]) -> list[Document]:
    """Documents from ragrecall ``Chunk`` s, dicts (``id``, ``text``, ``metadata``), strings,
    LangChain ``Document`` s (``id`` or ``metadata["id"]``, else their position) and LlamaIndex
    nodes or ``NodeWithScore`` s (their ``node_id``)."""
    docs: list[Document] = []
    for i, item in enumerate(items):
        item = getattr(item, "node", item)  # LlamaIndex NodeWithScore
        if isinstance(item, Chunk):
            doc = item
        elif isinstance(item, str):
            doc = Document(id=str(i + 1), text=item)
        elif isinstance(item, Mapping):
            doc = _row_document(item, index=i)
        elif hasattr(item, "page_content"):  # LangChain Document
            meta = dict(item.metadata or {})
            doc_id = item.id or meta.get("id") or str(i + 1)
            doc = Document(id=str(doc_id), text=str(item.page_content), metadata=meta)
        elif hasattr(item, "node_id") and hasattr(item, "get_content"):  # LlamaIndex node
            meta = dict(getattr(item, "metadata", None) or {})
            doc = Document(id=str(item.node_id), text=str(item.get_content()), metadata=meta)
        else:
            raise SampleError(
                f"corpus item {i}: a {type(item).__name__}, not a string, dict, Chunk, "
                "LangChain Document or LlamaIndex node"
            )
        if doc.text.strip():
            docs.append(doc)
    ids = [d.id for d in docs]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise SampleError(f"corpus: the id {dup!r} names more than one document")
    if not docs:
        raise SampleError("corpus: no document has any text")
    return docs


def chunk_documents(
    docs: Iterable[Document], size: int | None = 1000, overlap: int = 1
) -> list[Chunk]:
    """Each document cut into windows of whole sentences of at most ``size`` characters (a
    longer sentence is a window of its own), the next window starting ``overlap`` sentences
    before the previous one ended; ids ``doc_id#1``, ``doc_id#2``, ... A document that fits
    in one window keeps its id. ``size=None``: the documents are the chunks, ids kept."""
    if size is not None and size < 1:
        raise ValueError(f"chunk size must be at least 1, not {size}")
    if overlap < 0:
        raise ValueError(f"overlap must be >= 0, not {overlap}")
    chunks: list[Chunk] = []
    for doc in docs:
        windows = [doc.text] if size is None else _windows(doc.text, size, overlap)
        if len(windows) == 1:
            chunks.append(Chunk(id=doc.id, text=windows[0], metadata=doc.metadata))
            continue
        for n, text in enumerate(windows, start=1):
            meta = {**doc.metadata, "document_id": doc.id}
            chunks.append(Chunk(id=f"{doc.id}#{n}", text=text, metadata=meta))
    return chunks


def _windows(text: str, size: int, overlap: int) -> list[str]:
    sentences = split_sentences(text) or [text.strip()]
    windows: list[str] = []
    start = 0
    while start < len(sentences):
        end, length = start, 0
        while end < len(sentences) and (end == start or length + len(sentences[end]) < size):
            length += len(sentences[end]) + 1
            end += 1
        windows.append(" ".join(sentences[start:end]))
        if end >= len(sentences):
            break
        start = max(end - overlap, start + 1)
    return windows


class _Text(HTMLParser):
    _SKIPPED = frozenset({"script", "style", "head", "noscript", "template"})
    _BLOCKS = frozenset({"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._SKIPPED:
            self.skipping += 1
        elif tag in self._BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIPPED:
            self.skipping = max(self.skipping - 1, 0)
        elif tag in self._BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.parts.append(data)


def _html_text(html: str) -> str:
    """The visible text of an HTML page, a line per block."""
    parser = _Text()
    parser.feed(html)
    parser.close()
    text = "".join(parser.parts)
    return "\n".join(" ".join(line.split()) for line in text.splitlines() if line.strip())
