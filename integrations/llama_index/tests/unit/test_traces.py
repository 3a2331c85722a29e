"""load_traces on the OTLP JSON export of a real query engine traced by OpenInference's
LlamaIndex instrumentor (ids, scores and content on the spans; one retriever inside another)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from llama_index.core.base.base_query_engine import BaseQueryEngine
from openinference.instrumentation import using_metadata
from openinference.instrumentation.llama_index import LlamaIndexInstrumentor
from otlp_export import otlp_json, otlp_lines, parse_otlp, recording

from ragrecall import ClaimCache, ContextRecall, RetrievalRecall, evaluate, load_traces
from ragrecall.testing import ScriptedJudge

# The instrumentor calls pydantic's deprecated .json() on LlamaIndex objects.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def references(questions: dict[str, tuple[str, str]]) -> list[dict[str, Any]]:
    return [
        {"sample_id": doc, "user_input": q, "reference": ref, "reference_ids": [doc]}
        for q, (ref, doc) in questions.items()
    ]


def traced(engine: BaseQueryEngine, questions: dict[str, tuple[str, str]]) -> list[Any]:
    with recording(LlamaIndexInstrumentor()) as exporter:
        for question, (_, doc) in questions.items():
            with using_metadata({"sample_id": doc}):
                engine.query(question)
    return list(exporter.get_finished_spans())


def test_query_engine_spans_by_question(
    query_engine: BaseQueryEngine, questions: dict[str, tuple[str, str]], tmp_path: Path
) -> None:
    spans = traced(query_engine, questions)
    kinds = [dict(s.attributes or {}).get("openinference.span.kind") for s in spans]
    assert kinds.count("RETRIEVER") == 2 * len(questions)  # retrieve() wraps _retrieve()
    path = tmp_path / "spans.json"
    path.write_text(otlp_json(spans))
    asked = dict(list(questions.items())[:2])
    result = load_traces(path, references(asked))
    assert [s.user_input for s in result.samples] == list(asked)
    assert result.unmatched == [list(questions)[2]] and result.not_assessed == []
    for sample in result.samples:
        direct = query_engine.query(str(sample.user_input))
        chunks = sample.retrieved_contexts
        assert [c.id for c in chunks] == [n.node.node_id for n in direct.source_nodes]
        assert [c.score for c in chunks] == [n.score for n in direct.source_nodes]
        assert [c.text for c in chunks] == [n.node.get_content() for n in direct.source_nodes]
        assert [c.metadata for c in chunks] == [n.node.metadata for n in direct.source_nodes]
        assert sample.response == str(direct)
    recall = ContextRecall(ScriptedJudge(), strategy="per_claim", cache=ClaimCache())
    report = evaluate(result.samples, [recall, RetrievalRecall(ks=[1])])
    assert [r.score for r in report.results["retrieval_recall"]] == [1.0, 1.0]
    assert [r.score for r in report.results["context_recall"]] == [0.5, 1.0]


def test_by_metadata_attribute_and_written_back(
    query_engine: BaseQueryEngine, questions: dict[str, tuple[str, str]], tmp_path: Path
) -> None:
    path, out = tmp_path / "spans.jsonl", tmp_path / "scored.jsonl"
    path.write_text(otlp_lines(traced(query_engine, questions)))
    refs = [dict(row, user_input=None) for row in references(questions)]  # ids only
    result = load_traces(path, refs, join_on="metadata.sample_id")
    assert [s.sample_id for s in result.samples] == ["eiffel", "banana", "moon"]
    report = evaluate(result.samples, [RetrievalRecall()])
    assert result.write_scores(out, report) == 3
    lines = out.read_text().splitlines()
    assert len(lines) == len(path.read_text().splitlines())  # one request per line still
    names = [
        a.value.string_value
        for line in lines
        for resource in parse_otlp(line).resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
        for a in span.attributes
        if a.key == "evaluations.0.evaluation.name"
    ]
    assert names == ["retrieval_recall"] * 3
