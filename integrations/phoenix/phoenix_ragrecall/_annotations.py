"""ragrecall's scores as Phoenix span annotations, on the retriever spans they were read from.

Phoenix takes evaluations through its span-annotations API, not from span attributes: these
functions turn results into ``SpanAnnotationData`` (name, annotator kind, result: score,
label, explanation (``ragrecall.adapters.explanation``); the metadata holds ``verdicts``, one
dict per claim: claim, supported, chunk_ids, evidence, p_supported, and ``error.type`` where
a sample was unscorable) and post
them with ``phoenix.client.Client().spans.log_span_annotations``.

- From Python: ``log_span_annotations(traced, report)`` with ``traced =
  ragrecall.load_traces(...)`` and the report of its samples.
- From the command line: ``ragrecall eval refs.jsonl --from-traces spans.json --traces-out
  scored.json``, then ``log_traces_out("scored.json")``, which reads the
  ``gen_ai.evaluation.result`` events written on each retriever span.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal, cast

from phoenix.client import Client
from phoenix.client.__generated__.v1 import AnnotationResult, SpanAnnotationData

from ragrecall import EvaluationReport, RecallResult, TracedSamples

__all__ = [
    "annotations_from_traces_out",
    "log_span_annotations",
    "log_traces_out",
    "span_annotations",
]

Results = EvaluationReport | Iterable[Mapping[str, RecallResult] | None]
AnnotatorKind = Literal["LLM", "CODE", "HUMAN"]


def span_annotations(traced: TracedSamples, results: Results) -> list[SpanAnnotationData]:
    """One annotation per retriever span and metric, from ``traced``'s samples' ``results``
    (an ``EvaluationReport`` of ``traced.samples``, or one ``{metric: result}`` per sample)."""
    rows = results if isinstance(results, EvaluationReport) else list(results)
    return [
        _annotation(_hex_id(span_id), evaluation)
        for (_, span_id), evaluations in traced.span_evaluations(rows).items()
        for evaluation in evaluations
    ]


def log_span_annotations(
    traced: TracedSamples, results: Results, client: Client | None = None, *, sync: bool = True
) -> int:
    """Post ``span_annotations(traced, results)`` to Phoenix (``client``, else ``Client()``:
    ``PHOENIX_COLLECTOR_ENDPOINT`` / ``PHOENIX_BASE_URL`` or http://localhost:6006); returns
    how many were posted."""
    return _post(span_annotations(traced, results), client, sync)


def annotations_from_traces_out(path: str | os.PathLike[str]) -> list[SpanAnnotationData]:
    """The annotations in a file ``ragrecall eval --traces-out`` wrote: one per
    ``gen_ai.evaluation.result`` event of a span."""
    annotations = []
    for span in _spans(Path(path)):
        for event in span.get("events") or []:
            if event.get("name") != "gen_ai.evaluation.result":
                continue
            fields = {a["key"]: _value(a.get("value") or {}) for a in event.get("attributes") or []}
            attributes = {
                a["key"]: _value(a.get("value") or {}) for a in span.get("attributes") or []
            }
            evaluation = {
                "name": fields.get("gen_ai.evaluation.name"),
                "score": fields.get("gen_ai.evaluation.score.value"),
                "label": fields.get("gen_ai.evaluation.score.label"),
                "explanation": fields.get("gen_ai.evaluation.explanation"),
                "annotator_kind": _kind(attributes, fields.get("gen_ai.evaluation.name")),
                "error_type": fields.get("error.type"),
                "verdicts": json.loads(fields.get("ragrecall.evaluation.verdicts") or "[]"),
            }
            annotations.append(_annotation(_hex_id(str(span.get("spanId", ""))), evaluation))
    return annotations


def log_traces_out(
    path: str | os.PathLike[str], client: Client | None = None, *, sync: bool = True
) -> int:
    """Post the annotations of a ``--traces-out`` file to Phoenix; returns how many."""
    return _post(annotations_from_traces_out(path), client, sync)


def _annotation(span_id: str, evaluation: Mapping[str, Any]) -> SpanAnnotationData:
    result: AnnotationResult = {}
    if evaluation.get("score") is not None:
        result["score"] = float(evaluation["score"])
    if evaluation.get("label"):
        result["label"] = str(evaluation["label"])
    if evaluation.get("explanation"):
        result["explanation"] = str(evaluation["explanation"])
    kind = evaluation.get("annotator_kind")
    metadata: dict[str, Any] = {"source": "ragrecall"}
    if evaluation.get("error_type"):
        metadata["error.type"] = evaluation["error_type"]
    if evaluation.get("verdicts"):
        metadata["verdicts"] = list(evaluation["verdicts"])
    return {
        "name": str(evaluation["name"]),
        "annotator_kind": cast(AnnotatorKind, kind if kind in ("LLM", "CODE") else "CODE"),
        "span_id": span_id,
        "result": result,
        "metadata": metadata,
    }


def _post(annotations: list[SpanAnnotationData], client: Client | None, sync: bool) -> int:
    if annotations:
        (client or Client()).spans.log_span_annotations(span_annotations=annotations, sync=sync)
    return len(annotations)


def _spans(path: Path) -> Iterator[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    try:
        loaded = json.loads(text)
        requests = loaded if isinstance(loaded, list) else [loaded]
    except json.JSONDecodeError:  # one request per line, as the Collector's file exporter writes
        requests = [json.loads(line) for line in text.splitlines() if line.strip()]
    for request in requests:
        for resource in request.get("resourceSpans") or []:
            for scope in resource.get("scopeSpans") or []:
                yield from scope.get("spans") or []


def _kind(attributes: Mapping[str, Any], name: Any) -> Any:
    """The annotator kind written beside the event, in the OpenInference attributes."""
    for key, value in attributes.items():
        if key.endswith(".evaluation.name") and value == name:
            return attributes.get(key.removesuffix("name") + "annotator_kind")
    return None


def _value(any_value: Mapping[str, Any]) -> Any:
    for kind, value in any_value.items():
        if kind == "intValue":
            return int(value)
        if kind == "doubleValue":
            return float(value)
        return value
    return None


def _hex_id(span_id: str) -> str:
    """Phoenix's span id (16 hex digits), from OTLP JSON's hex or a protobuf-JSON base64."""
    if len(span_id) == 16 and all(c in "0123456789abcdefABCDEF" for c in span_id):
        return span_id.lower()
    try:
        return base64.b64decode(span_id, validate=True).hex()
    except ValueError:
        return span_id
