"""LangSmith run exports: runs as the LangSmith API returns them (``langsmith.schemas.Run``
as JSON), in a JSON list, one per line, or under ``{"runs": [...]}``; nested ``child_runs``
are read too. A retriever run has ``run_type`` ``retriever``, ``inputs.query`` and
``outputs.documents`` (LangChain Documents: ``page_content``, ``metadata``, ``id``)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from .spans import ANSWER_KEYS, QUESTION_KEYS, Document, Span, text_in

__all__ = ["is_run", "run_spans"]


def is_run(value: Any) -> bool:
    return isinstance(value, Mapping) and "run_type" in value and "id" in value


def run_spans(runs: list[Any]) -> Iterator[Span]:
    for run in runs:
        yield from _flat(run)


def _flat(run: Mapping[str, Any]) -> Iterator[Span]:
    yield _span(run)
    for child in run.get("child_runs") or []:
        if is_run(child):
            yield from _flat({"parent_run_id": run["id"], "trace_id": run.get("trace_id")} | child)


def _span(run: Mapping[str, Any]) -> Span:
    inputs, outputs = run.get("inputs") or {}, run.get("outputs") or {}
    documents = None
    if run.get("run_type") == "retriever":
        listed = outputs.get("documents", outputs.get("output", []))
        documents = [_document(d) for d in listed if isinstance(d, Mapping)]
    extra = run.get("extra") or {}
    attributes = {**run, "metadata": extra.get("metadata") or {}}
    parent = run.get("parent_run_id")
    return Span(
        trace=str(run.get("trace_id") or run["id"]),
        id=str(run["id"]),
        parent=None if parent is None else str(parent),
        start=str(run.get("start_time") or ""),
        input=text_in(inputs, QUESTION_KEYS),
        output=text_in(outputs, ANSWER_KEYS),
        documents=documents,
        attributes=attributes,
    )


def _document(doc: Mapping[str, Any]) -> Document:
    kwargs = doc.get("kwargs")  # a Document serialised by langchain_core.load.dumpd
    if isinstance(kwargs, Mapping) and doc.get("lc") is not None:
        doc = kwargs
    text = doc.get("page_content", doc.get("text"))
    metadata = doc.get("metadata")
    doc_id = doc.get("id")
    return Document(
        id=None if doc_id is None else str(doc_id),
        text=text if isinstance(text, str) else None,
        metadata=metadata if isinstance(metadata, Mapping) else {},
    )
