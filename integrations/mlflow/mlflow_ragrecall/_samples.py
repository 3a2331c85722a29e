"""MLflow's scorer arguments as ragrecall samples: one per top-level RETRIEVER span of the
trace (MLflow's own retrieval judges read the same spans), else one from the inputs.

The reference comes from ``expectations`` (or, without them, from the trace's expectation
assessments), under MLflow's names: ``expected_response`` (also ``expected_output``,
``reference``, ``ground_truth``) and ``expected_facts`` (the claims, which skips
decomposition); ``reference_ids``, ``reference_contexts`` and ``expected_retrieved_context``
(its ``doc_uri``s) serve the ID- and text-based metrics.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mlflow.entities import Expectation, Span, SpanType, Trace

from ragrecall import Chunk, Sample

__all__ = ["Retrieved", "chunks", "samples_from"]

_REFERENCE_KEYS = ("expected_response", "expected_output", "reference", "ground_truth")
_QUESTION_KEYS = ("query", "question", "user_input", "input", "request", "prompt")
_CONTEXT_KEYS = ("retrieved_contexts", "contexts", "context", "retrieved_context")
_ANSWER_KEYS = ("response", "answer", "output", "result", "content", "text")
_TEXT_KEYS = ("page_content", "content", "text")  # MLflow's own, in its order


@dataclass(frozen=True)
class Retrieved:
    """A sample to score and the RETRIEVER span it was read from (None: from the inputs)."""

    sample: Sample
    span_id: str | None


def samples_from(
    inputs: Any, outputs: Any, expectations: Mapping[str, Any] | None, trace: Trace | None
) -> list[Retrieved]:
    """One sample per top-level RETRIEVER span of ``trace``, else one from ``inputs``
    (``retrieved_contexts``/``contexts``/``context``). ValueError when a field is unusable."""
    if expectations is None and trace is not None:
        expectations = _trace_expectations(trace)
    root = _root(trace) if trace is not None else None
    if inputs is None and root is not None:
        inputs = root.inputs
    if outputs is None and root is not None:
        outputs = root.outputs
    fields = _reference_fields(expectations or {})
    question, response = _text(inputs, _QUESTION_KEYS), _text(outputs, _ANSWER_KEYS)
    spans = _retriever_spans(trace) if trace is not None else []
    if spans:
        return [
            Retrieved(
                Sample.model_validate(
                    {
                        **fields,
                        "user_input": _text(span.inputs, _QUESTION_KEYS) or question,
                        "response": response,
                        "retrieved_contexts": chunks(span.outputs),
                    }
                ),
                span.span_id,
            )
            for span in spans
        ]
    contexts = next(
        (inputs[k] for k in _CONTEXT_KEYS if isinstance(inputs, Mapping) and k in inputs), None
    )
    if contexts is None:
        raise ValueError(
            "no retrieved contexts: the trace has no RETRIEVER span, and the inputs have no "
            f"{' / '.join(_CONTEXT_KEYS)}"
        )
    sample = Sample.model_validate(
        {
            **fields,
            "user_input": question,
            "response": response,
            "retrieved_contexts": chunks([contexts] if isinstance(contexts, str) else contexts),
        }
    )
    return [Retrieved(sample, None)]


def _reference_fields(expectations: Mapping[str, Any]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    reference = next((expectations[k] for k in _REFERENCE_KEYS if k in expectations), None)
    if reference is not None:
        fields["reference"] = reference if isinstance(reference, str) else json.dumps(reference)
    facts = expectations.get("expected_facts", expectations.get("reference_claims"))
    if facts is not None:
        fields["reference_claims"] = [facts] if isinstance(facts, str) else [str(f) for f in facts]
    ids = expectations.get("reference_ids")
    documents = expectations.get("expected_retrieved_context")
    if ids is None and isinstance(documents, Sequence) and not isinstance(documents, str):
        uris = [d.get("doc_uri") for d in documents if isinstance(d, Mapping)]
        ids = [str(u) for u in uris if u is not None] or None
    if ids is not None:
        fields["reference_ids"] = ids
    for key in ("reference_contexts", "relevance"):
        if key in expectations:
            fields[key] = expectations[key]
    return fields


def _trace_expectations(trace: Trace) -> dict[str, Any] | None:
    found = {
        a.name: a.value
        for a in trace.search_assessments(type="expectation")
        if isinstance(a, Expectation)
    }
    return found or None


def _root(trace: Trace) -> Span | None:
    return next((s for s in trace.data.spans if s.parent_id is None), None)


def _retriever_spans(trace: Trace) -> list[Span]:
    """RETRIEVER spans with no RETRIEVER span above them (a wrapper's inner retriever is the
    same retrieval), in the trace's order."""
    by_id = {span.span_id: span for span in trace.data.spans}
    top = []
    for span in trace.data.spans:
        if span.span_type != SpanType.RETRIEVER:
            continue
        parent = by_id.get(span.parent_id) if span.parent_id else None
        while parent is not None and parent.span_type != SpanType.RETRIEVER:
            parent = by_id.get(parent.parent_id) if parent.parent_id else None
        if parent is None:
            top.append(span)
    return top


def chunks(documents: Any) -> list[Chunk]:
    """A retriever's documents (MLflow ``Document`` dicts, LangChain documents, strings) as
    chunks; ids from the document (``id``, else ``metadata.doc_uri``), else their rank."""
    if isinstance(documents, str):
        documents = json.loads(documents)
    if hasattr(documents, "tolist"):  # a numpy array (a pandas cell)
        documents = documents.tolist()
    if documents is None:
        return []
    if not isinstance(documents, Sequence):
        raise ValueError(f"retrieved documents: expected a list, got {type(documents).__name__}")
    out: list[Chunk] = []
    seen: set[str] = set()
    for rank, doc in enumerate(documents, start=1):
        if hasattr(doc, "page_content"):  # a Document object, when outputs were not serialised
            doc = {"page_content": doc.page_content, "metadata": doc.metadata, "id": doc.id}
        if isinstance(doc, str):
            doc = {"page_content": doc}
        if not isinstance(doc, Mapping):
            raise ValueError(f"retrieved document {rank}: not a document ({type(doc).__name__})")
        text = next((doc[k] for k in _TEXT_KEYS if isinstance(doc.get(k), str)), None)
        if text is None:
            raise ValueError(f"retrieved document {rank}: no text (expected one of {_TEXT_KEYS})")
        raw = doc.get("metadata")
        metadata: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        given = doc.get("id") or metadata.get("doc_uri")
        chunk_id = str(given) if given is not None else str(rank)
        if chunk_id in seen:  # two chunks of one document
            chunk_id = f"{chunk_id}#{rank}"
        seen.add(chunk_id)
        score = metadata.get("score", doc.get("score"))
        out.append(
            Chunk(
                id=chunk_id,
                text=text,
                rank=rank,
                score=float(score) if isinstance(score, (int, float)) else None,
                metadata=dict(metadata),
            )
        )
    return out


def _text(value: Any, keys: Sequence[str]) -> str | None:
    """The text in an input or output: a string, the first of ``keys`` in a mapping, the last
    message's content in a chat request or reply; else the value as JSON."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        for key in keys:
            if isinstance(value.get(key), str):
                return str(value[key])
        messages = value.get("messages")
        if isinstance(messages, list) and messages and isinstance(messages[-1], Mapping):
            content = messages[-1].get("content")
            if isinstance(content, str):
                return content
        choices = value.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], Mapping):
            message = choices[0].get("message")
            if isinstance(message, Mapping) and isinstance(message.get("content"), str):
                return str(message["content"])
    if hasattr(value, "content") and isinstance(value.content, str):  # a chat message
        return str(value.content)
    return json.dumps(value, default=str, ensure_ascii=False)
