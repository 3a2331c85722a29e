"""Real parts for the tests: a LangChain retriever (an in-memory vector store on
langchain-ragrecall's hashing embedding) traced by OpenInference's LangChain instrumentor
through the OTel SDK, its spans written as an OTLP JSON file, and ragrecall's offline
scripted judge (``ragrecall.testing.ScriptedJudge``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fakes import keyword_and_relevance
from google.protobuf.json_format import MessageToDict
from hashing_embeddings import HashingEmbeddings
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.vectorstores import InMemoryVectorStore
from openinference.instrumentation.langchain import LangChainInstrumentor
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from ragrecall.testing import ScriptedJudge

PROJECT = "ragrecall-tests"
DOCUMENTS = [
    Document("The Eiffel Tower is in Paris.", id="eiffel"),
    Document("The Eiffel Tower was finished in 1889.", id="eiffel-1889"),
    Document("The Colosseum is in Rome.", id="colosseum"),
    Document("Cats purr when they are content.", id="cats"),
]
REFERENCES = [
    {
        "sample_id": "eiffel",
        "user_input": "Where is the Eiffel Tower?",
        "reference": "The Eiffel Tower is in Paris. The Eiffel Tower was finished in 1889.",
        "reference_ids": ["eiffel", "eiffel-1889"],
    },
    {
        "sample_id": "cats",
        "user_input": "Do cats purr?",
        "reference": "Cats purr when they are content.",
    },
]


@pytest.fixture
def judge() -> ScriptedJudge:
    """ragrecall's scripted judge (``ragrecall.testing``): word inclusion, no model."""
    return ScriptedJudge(reply=keyword_and_relevance)


@pytest.fixture
def failing_judge() -> ScriptedJudge:
    """A judge that is down: every call raises."""
    return ScriptedJudge(reply=lambda messages: ConnectionError("the judge is down"))


@pytest.fixture
def retriever() -> BaseRetriever:
    store = InMemoryVectorStore(HashingEmbeddings())
    store.add_documents(DOCUMENTS)
    return store.as_retriever(search_kwargs={"k": 1})


@contextmanager
def traced(*exporters: SpanExporter) -> Iterator[InMemorySpanExporter]:
    """LangChain traced by OpenInference until the block ends: spans kept in memory and sent
    to ``exporters`` too, under the project ``PROJECT``."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource({"openinference.project.name": PROJECT}))
    for exporter in (memory, *exporters):
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        yield memory
    finally:
        instrumentor.uninstrument()
        provider.shutdown()


@dataclass
class Traced:
    """The retriever's runs, traced: the OTLP JSON file and each question's span id (hex)."""

    path: Path
    span_ids: dict[str, str]


@pytest.fixture
def references() -> list[dict[str, Any]]:
    return [dict(row) for row in REFERENCES]


@pytest.fixture
def trace_questions(retriever: BaseRetriever, tmp_path: Path) -> Callable[..., Traced]:
    """Ask the retriever the references' questions, traced (spans also sent to
    ``exporters``); the spans written to an OTLP JSON file."""

    def run(*exporters: SpanExporter) -> Traced:
        with traced(*exporters) as memory:
            for row in REFERENCES:
                retriever.invoke(row["user_input"])
        spans = memory.get_finished_spans()
        return Traced(write_otlp(spans, tmp_path / "spans.json"), retriever_span_ids(spans))

    return run


def write_otlp(spans: Sequence[ReadableSpan], path: Path) -> Path:
    """The spans as one OTLP JSON request (protobuf's JSON mapping: ids in base64)."""
    path.write_text(json.dumps(MessageToDict(encode_spans(spans))), encoding="utf-8")
    return path


def retriever_span_ids(spans: Sequence[ReadableSpan]) -> dict[str, str]:
    """Question -> the hex id of the retriever span that answered it."""
    found: dict[str, str] = {}
    for span in spans:
        attributes: Any = span.attributes or {}
        if attributes.get("openinference.span.kind") == "RETRIEVER" and span.context:
            found[str(attributes.get("input.value"))] = format(span.context.span_id, "016x")
    return found
