"""LangSmith run exports: runs as the LangSmith API returns them (``langsmith.schemas.Run``
as JSON), in a JSON list, one per line, or under ``{"runs": [...]}``; nested ``child_runs``
are read too. A retriever run has ``run_type`` ``retriever``, ``inputs.query`` and
``outputs.documents`` (LangChain Documents: ``page_content``, ``metadata``, ``id``)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ragrecall._core.errors import SampleError

from .spans import ANSWER_KEYS, QUESTION_KEYS, Document, Span, text_in

__all__ = ["is_run", "run_spans"]


def is_run(value: Any) -> bool:
    return isinstance(value, Mapping) and "run_type" in value and "id" in value


def run_spans(runs: list[Any], path: object = "traces") -> Iterator[Span]:
    """Every run of ``runs`` and of their ``child_runs`` (at any depth, without recursion),
    as spans. A run of the wrong shape raises SampleError naming the file and the run."""
    for number, top in enumerate(runs):
        stack: list[tuple[Mapping[str, Any], str]] = [(top, f"run {number}")]
        while stack:
            run, where = stack.pop()
            try:
                span = _span(run)
                children = run.get("child_runs") or []
                if not isinstance(children, list):
                    raise TypeError(f"child_runs is {type(children).__name__}, not a list")
            except (AttributeError, TypeError, KeyError, ValueError) as err:
                shown = run.get("id") if isinstance(run, Mapping) else None
                named = f"{where}" + ("" if shown is None else f" (id {str(shown)[:40]!r})")
                problem = f"missing {err}" if isinstance(err, KeyError) else str(err)
                raise SampleError(f"{path}: {named}: not a LangSmith run: {problem}") from err
            yield span
            inherited = {"parent_run_id": run["id"], "trace_id": run.get("trace_id")}
            for i, child in reversed(list(enumerate(children))):
                if is_run(child):
                    stack.append((inherited | child, f"{where}, child_runs[{i}]"))


def _span(run: Mapping[str, Any]) -> Span:
    inputs, outputs = run.get("inputs") or {}, run.get("outputs") or {}
    documents = None
    if run.get("run_type") == "retriever":
        if not isinstance(outputs, Mapping):
            raise TypeError(f"outputs is {type(outputs).__name__}, not an object")
        listed = outputs.get("documents", outputs.get("output", []))
        if not isinstance(listed, list):
            raise TypeError(f"outputs.documents is {type(listed).__name__}, not a list")
        documents = [_document(d) for d in listed if isinstance(d, Mapping)]
    extra = run.get("extra") or {}
    if not isinstance(extra, Mapping):
        raise TypeError(f"extra is {type(extra).__name__}, not an object")
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
