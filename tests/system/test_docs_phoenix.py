"""The Phoenix page's blocks (docs/integrations/phoenix.md, marked for this test) run against a
real Phoenix server: ``phoenix serve`` from its own venv, .venv-phoenix, on 127.0.0.1 with its
data in a temporary folder, as integrations/phoenix/tests/system starts it. The page's "app" is
a LangChain retriever over an in-memory vector store, traced by OpenInference into the project
``my-rag-app`` (spans sent to the server and written to ``spans.json``); ``references.jsonl``
holds its references. The blocks run with ``testkit/doc_blocks.py``, output checked."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from doc_blocks import DOCS, PHOENIX, blocks, run_blocks
from hashing_embeddings import HashingEmbeddings
from langchain_core.documents import Document
from langchain_core.vectorstores import InMemoryVectorStore
from openinference.instrumentation.langchain import LangChainInstrumentor
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from otlp_export import otlp_json
from phoenix.client import Client
from phoenix_server import phoenix_server, wait_ingested

PAGE = "integrations/phoenix.md"
PROJECT = "my-rag-app"  # the project the page reads
DOCUMENTS = [
    Document("The Eiffel Tower is in Paris.", id="eiffel"),
    Document("The Eiffel Tower was finished in 1889.", id="eiffel-1889"),
    Document("The Colosseum is in Rome.", id="colosseum"),
    Document("Cats purr when they are content.", id="cats"),
]
REFERENCES = [
    {
        "user_input": "Where is the Eiffel Tower?",
        "reference": "The Eiffel Tower is in Paris. The Eiffel Tower was finished in 1889.",
        "reference_ids": ["eiffel", "eiffel-1889"],
    },
    {
        "user_input": "Do cats purr?",
        "reference": "Cats purr when they are content.",
        "reference_ids": ["cats"],
    },
]


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Phoenix server of this test's own; its base URL."""
    with phoenix_server(tmp_path_factory.mktemp("phoenix")) as url:
        yield url


def trace_the_app(url: str, folder: Path) -> list[str]:
    """Ask the retriever the references' questions, traced by OpenInference into the project:
    the spans sent to the server and written to ``folder/spans.json``; their span ids (hex)."""
    store = InMemoryVectorStore(HashingEmbeddings())
    store.add_documents(DOCUMENTS)
    retriever = store.as_retriever(search_kwargs={"k": 1})
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource({"openinference.project.name": PROJECT}))
    for exporter in (memory, OTLPSpanExporter(endpoint=f"{url}/v1/traces")):
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        for row in REFERENCES:
            retriever.invoke(str(row["user_input"]))
    finally:
        instrumentor.uninstrument()
        provider.shutdown()
    spans = memory.get_finished_spans()
    (folder / "spans.json").write_text(otlp_json(spans), encoding="utf-8")
    return [format(span.context.span_id, "016x") for span in spans if span.context]


def test_the_phoenix_pages_blocks_run_against_a_server(
    phoenix: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGRECALL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PHOENIX_COLLECTOR_ENDPOINT", phoenix)  # what Client() reads
    span_ids = trace_the_app(phoenix, tmp_path)
    (tmp_path / "references.jsonl").write_text("".join(json.dumps(r) + "\n" for r in REFERENCES))
    client = Client(base_url=phoenix)
    wait_ingested(client, PROJECT, span_ids)
    marked = [b for b in blocks(DOCS / PAGE) if b.skip == PHOENIX]
    assert len(marked) == 3
    assert run_blocks(PAGE, tmp_path, monkeypatch, also=PHOENIX) == 3
    # what the blocks posted is on the retriever spans, read back from Phoenix: one annotation
    # per span and name (the last block's context_recall replaced the first block's)
    found = client.spans.get_span_annotations(span_ids=span_ids, project_identifier=PROJECT)
    assert sorted((a["span_id"], a["name"]) for a in found) == sorted(
        (span_id, name) for span_id in span_ids for name in ("context_recall", "retrieval_recall")
    )
