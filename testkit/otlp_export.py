"""Trace exports for the tests, written by the real libraries: finished OTel SDK spans
encoded by ``opentelemetry-exporter-otlp-proto-common`` (the OTLP exporters' encoder) and
printed with protobuf's JSON mapping."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from google.protobuf.json_format import MessageToDict, Parse
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


@contextmanager
def recording(instrumentor: Any) -> Iterator[InMemorySpanExporter]:
    """``instrumentor`` sends its spans to an in-memory exporter until the block ends."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor.instrument(tracer_provider=provider)
    try:
        yield exporter
    finally:
        instrumentor.uninstrument()


def otlp_request(spans: Sequence[ReadableSpan]) -> dict[str, Any]:
    """The spans as one ExportTraceServiceRequest in protobuf's JSON mapping (ids base64)."""
    return MessageToDict(encode_spans(spans))


def otlp_json(spans: Sequence[ReadableSpan]) -> str:
    return json.dumps(otlp_request(spans))


def otlp_lines(spans: Sequence[ReadableSpan]) -> str:
    """One request per span, one per line, with ids in hex as OTLP/JSON writes them (the
    Collector's file exporter)."""
    lines = []
    for span in spans:
        request = otlp_request([span])
        for raw in _spans(request):
            for key in ("traceId", "spanId", "parentSpanId"):
                if key in raw:
                    raw[key] = base64.b64decode(raw[key]).hex()
        lines.append(json.dumps(request))
    return "\n".join(lines) + "\n"


def parse_otlp(text: str) -> ExportTraceServiceRequest:
    """One OTLP JSON request parsed by protobuf itself (raises on anything invalid); ids in
    hex, as OTLP/JSON writes them, are read as protobuf's JSON mapping wants them (base64)."""
    request = json.loads(text)
    for raw in _spans(request):
        for key in ("traceId", "spanId", "parentSpanId"):
            value = raw.get(key)
            if value and all(c in "0123456789abcdef" for c in value):
                raw[key] = base64.b64encode(bytes.fromhex(value)).decode()
    return Parse(json.dumps(request), ExportTraceServiceRequest())


def _spans(request: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for resource in request["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            yield from scope["spans"]
