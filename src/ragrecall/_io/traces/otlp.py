"""OTLP JSON traces: read retriever spans, write evaluations back (one concern over 300
lines: the OTLP JSON format, both ways).

The file is what the OTel Collector's file exporter writes (one ``ExportTraceServiceRequest``
as JSON per line) or one such object: ``resourceSpans -> scopeSpans -> spans``, each span's
``attributes`` a list of ``{"key", "value": AnyValue}``. Trace and span ids are compared as
they are written (hex, as OTLP/JSON has them, or base64, as protobuf's JSON mapping does).

Retriever spans are OpenInference ``RETRIEVER`` spans (``retrieval.documents.{i}.document.
{id,content,score,metadata}``) and OTel GenAI retrieval spans (``gen_ai.operation.name``
``retrieval``; ``gen_ai.retrieval.documents``: ids and scores, as a JSON string or structured).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ragrecall._core.errors import SampleError

from ..safe import loads
from .spans import ANSWER_KEYS, QUESTION_KEYS, Document, Span, text_in

__all__ = ["Evaluation", "OtlpFile", "read_otlp"]

_DOC = re.compile(r"retrieval\.documents\.(\d+)\.document\.(id|content|score|metadata)")

Evaluation = dict[str, Any]  # name, score (None: unscorable), explanation, annotator_kind,
# error_type (unscorable only), verdicts (per claim: ragrecall.adapters.claim_metadata)


class OtlpFile:
    """The requests of one OTLP JSON file, as read; ``jsonl`` when it held one per line."""

    def __init__(self, requests: list[dict[str, Any]], jsonl: bool, path: object = "traces"):
        self.requests = requests
        self.jsonl = jsonl
        self.path = path

    def spans(self) -> Iterator[Span]:
        """Every span, read; a part of the wrong shape (a list that is an object, an
        attribute without a key, an intValue that is not a number) raises SampleError naming
        the file, the request (its line, one per line) and the span."""
        for r, request in enumerate(self.requests):
            line = r + 1 if self.jsonl else None
            where = f"request {r}" if len(self.requests) > 1 and not self.jsonl else ""
            for i, resource in enumerate(self._list(request, "resourceSpans", where, line)):
                at = f"{where}{', ' if where else ''}resourceSpans[{i}]"
                for j, scope in enumerate(self._list(resource, "scopeSpans", at, line)):
                    at_scope = f"{at}.scopeSpans[{j}]"
                    for k, raw in enumerate(self._list(scope, "spans", at_scope, line)):
                        yield self._read_span(raw, f"{at_scope}.spans[{k}]", line)

    def _list(self, container: Any, key: str, where: str, line: int | None) -> list[Any]:
        if not isinstance(container, Mapping):
            raise SampleError(
                f"{where or 'the request'} is {type(container).__name__}, not an object "
                "(not OTLP JSON traces)",
                file=str(self.path),
                line=line,
            )
        value = container.get(key) or []
        if not isinstance(value, list):
            raise SampleError(
                f"{where + '.' if where else ''}{key} is {type(value).__name__}, not a list "
                "(not OTLP JSON traces)",
                file=str(self.path),
                line=line,
            )
        return value

    def _read_span(self, raw: Any, where: str, line: int | None) -> Span:
        try:
            if not isinstance(raw, Mapping):
                raise TypeError(f"a span is {type(raw).__name__}, not an object")
            return _span(raw)
        except (AttributeError, TypeError, KeyError, ValueError, RecursionError) as err:
            span_id = raw.get("spanId") if isinstance(raw, Mapping) else None
            named = where + ("" if span_id is None else f" (spanId {str(span_id)[:40]!r})")
            if isinstance(err, KeyError):
                problem = f"missing {err}"
            elif isinstance(err, RecursionError):
                problem = "a value nested too deeply"
            else:
                problem = str(err)
            raise SampleError(
                f"{named}: unreadable span: {problem}", file=str(self.path), line=line
            ) from err

    def write(self, path: Path, evaluations: Mapping[tuple[str, str], Sequence[Evaluation]]) -> int:
        """Write the file to ``path`` with each span's ``evaluations`` added, as OpenInference
        ``evaluations.{i}.evaluation.*`` attributes and OTel GenAI ``gen_ai.evaluation.result``
        events; returns how many spans were annotated."""
        annotated = 0
        for request in self.requests:
            for resource in request.get("resourceSpans") or []:
                for scope in resource.get("scopeSpans") or []:
                    for raw in scope.get("spans") or []:
                        found = evaluations.get((raw.get("traceId", ""), raw.get("spanId", "")))
                        if found:
                            _annotate(raw, found)
                            annotated += 1
        if self.jsonl:
            text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in self.requests)
        else:
            value = self.requests[0] if len(self.requests) == 1 else self.requests
            text = json.dumps(value, ensure_ascii=False, indent=1) + "\n"
        path.write_text(text, encoding="utf-8")
        return annotated


def read_otlp(path: Path, requests: list[Any], jsonl: bool) -> OtlpFile:
    """The OTLP requests of a file (its JSON values), checked."""
    for i, request in enumerate(requests):
        if not isinstance(request, dict) or "resourceSpans" not in request:
            raise SampleError(f"{path}: request {i} has no resourceSpans: not OTLP JSON traces")
    return OtlpFile(requests, jsonl, path)


def _span(raw: Mapping[str, Any]) -> Span:
    listed = raw.get("attributes") or []
    if not isinstance(listed, list):
        raise TypeError(f"attributes is {type(listed).__name__}, not a list")
    attributes = {}
    for a in listed:
        if not isinstance(a, Mapping) or not isinstance(a.get("key"), str):
            raise TypeError(f"attribute {_clip(a)}: expected an object with a key")
        try:
            attributes[a["key"]] = _value(a.get("value") or {})
        except (AttributeError, TypeError, ValueError) as err:
            raise ValueError(f"attribute {a['key']!r}: {err}") from err
    documents: list[Document] | None = None
    query = attributes.get("input.value")
    if attributes.get("openinference.span.kind") == "RETRIEVER":
        documents = _openinference(attributes)
    elif attributes.get("gen_ai.operation.name") == "retrieval" or (
        "gen_ai.retrieval.documents" in attributes
    ):
        documents = _gen_ai(attributes.get("gen_ai.retrieval.documents"))
        query = attributes.get("gen_ai.retrieval.query.text", query)
    return Span(
        trace=str(raw.get("traceId", "")),
        id=str(raw.get("spanId", "")),
        parent=raw.get("parentSpanId") or None,
        start=str(raw.get("startTimeUnixNano", 0)).zfill(24),
        input=text_in(query, QUESTION_KEYS),
        output=text_in(attributes.get("output.value"), ANSWER_KEYS),
        documents=documents,
        attributes=attributes,
    )


def _openinference(attributes: Mapping[str, Any]) -> list[Document]:
    fields: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        match = _DOC.fullmatch(key)
        if match:
            fields.setdefault(int(match[1]), {})[match[2]] = value
    # OpenInference's LangChain instrumentor records no document.id; the documents it
    # serialises into output.value carry LangChain's Document.id.
    output = _json(attributes.get("output.value"))
    listed = output.get("documents") if isinstance(output, dict) else None
    listed = listed if isinstance(listed, list) and len(listed) == len(fields) else None
    documents = []
    for position, index in enumerate(sorted(fields)):
        doc = fields[index]
        doc_id = doc.get("id")
        if doc_id is None and listed and isinstance(listed[position], dict):
            doc_id = listed[position].get("id")
        metadata = _json(doc.get("metadata"))
        documents.append(
            Document(
                id=None if doc_id is None else str(doc_id),
                text=doc.get("content"),
                score=_number(doc.get("score")),
                metadata=metadata if isinstance(metadata, dict) else {},
            )
        )
    return documents


def _gen_ai(value: Any) -> list[Document]:
    items = _json(value) if isinstance(value, str) else value
    documents = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, Mapping):
            doc_id = item.get("id")
            text = item.get("content", item.get("text"))
            metadata = item.get("metadata")
            documents.append(
                Document(
                    id=None if doc_id is None else str(doc_id),
                    text=text if isinstance(text, str) else None,
                    score=_number(item.get("score")),
                    metadata=metadata if isinstance(metadata, dict) else {},
                )
            )
    return documents


def _value(any_value: Mapping[str, Any]) -> Any:
    """An OTLP AnyValue as a Python value (int64 is a JSON string in OTLP/JSON)."""
    if not isinstance(any_value, Mapping):
        raise TypeError(f"value {_clip(any_value)} is not an OTLP AnyValue object")
    for kind, value in any_value.items():
        if kind == "intValue":
            if isinstance(value, bool) or not isinstance(value, (int, str)):
                raise TypeError(f"intValue {_clip(value)} is not an integer")
            return int(value)
        if kind == "doubleValue":
            if isinstance(value, bool) or not isinstance(value, (int, float, str)):
                raise TypeError(f"doubleValue {_clip(value)} is not a number")
            return float(value)
        if kind == "arrayValue":
            return [_value(v) for v in _values(value)]
        if kind == "kvlistValue":
            kvs = _values(value)
            if not all(isinstance(kv, Mapping) and isinstance(kv.get("key"), str) for kv in kvs):
                raise TypeError("kvlistValue: expected objects with a key")
            return {kv["key"]: _value(kv.get("value") or {}) for kv in kvs}
        return value  # stringValue, boolValue, bytesValue (base64 text)
    return None


def _values(value: Any) -> list[Any]:
    """The ``values`` of an arrayValue or kvlistValue."""
    if not value:
        return []
    if not isinstance(value, Mapping):
        raise TypeError(f"{_clip(value)} is not an object of values")
    values = value.get("values") or []
    if not isinstance(values, list):
        raise TypeError(f"values is {type(values).__name__}, not a list")
    return values


def _clip(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _json(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return loads(value)
    except ValueError:
        return None


def _number(value: Any) -> float | None:
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None


def _annotate(raw: dict[str, Any], evaluations: Sequence[Evaluation]) -> None:
    attributes = raw.setdefault("attributes", [])
    taken = [
        int(m[1])
        for a in attributes
        if (m := re.match(r"evaluations\.(\d+)\.", a.get("key", ""))) is not None
    ]
    first = max(taken, default=-1) + 1
    events = raw.setdefault("events", [])
    for offset, ev in enumerate(evaluations):
        prefix = f"evaluations.{first + offset}.evaluation."
        fields = {
            "name": ev["name"],
            "score": ev.get("score"),
            "label": ev.get("label"),
            "explanation": ev.get("explanation") or None,
            "annotator_kind": ev.get("annotator_kind"),
        }
        attributes.extend(_attribute(prefix + k, v) for k, v in fields.items() if v is not None)
        verdicts = json.dumps(ev["verdicts"], ensure_ascii=False) if ev.get("verdicts") else None
        event = {
            "gen_ai.evaluation.name": ev["name"],
            "gen_ai.evaluation.score.value": ev.get("score"),
            "gen_ai.evaluation.score.label": ev.get("label"),
            "gen_ai.evaluation.explanation": ev.get("explanation") or None,
            "error.type": ev.get("error_type"),  # unscorable: what kind of failure
            "ragrecall.evaluation.verdicts": verdicts,  # per claim, as JSON
        }
        events.append(
            {
                "timeUnixNano": raw.get("endTimeUnixNano", raw.get("startTimeUnixNano", "0")),
                "name": "gen_ai.evaluation.result",
                "attributes": [_attribute(k, v) for k, v in event.items() if v is not None],
            }
        )


def _attribute(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": str(value)}}
