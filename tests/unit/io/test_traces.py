"""load_traces and `eval --from-traces` on OTel GenAI retrieval spans (ids and scores, no
content) written by the OpenTelemetry GenAI utilities, exported as OTLP JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import ScriptedJudge
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.util.genai.handler import TelemetryHandler
from opentelemetry.util.genai.types import RetrievalDocument
from otlp_export import otlp_json, parse_otlp

from ragrecall import (
    ClaimCache,
    ContextRecall,
    RecallResult,
    RetrievalRecall,
    SampleError,
    evaluate,
    load_traces,
)
from ragrecall.adapters import error_type, explanation
from ragrecall.cli import main

TEXTS = {
    "eiffel": "The Eiffel Tower is in Paris.",
    "moon": "The Moon orbits the Earth.",
    "banana": "Bananas are yellow.",
}
# question -> (sample id, what the retriever returned: (id, score))
RETRIEVED = {
    "Where is the Eiffel Tower?": ("s1", [("eiffel", 0.9), ("moon", 0.2)]),
    "What colour are bananas?": ("s2", [("moon", 0.4)]),
}
REFERENCES = [
    {"sample_id": "s1", "question": "Where is the Eiffel Tower?",
     "reference": "The Eiffel Tower is in Paris.", "reference_ids": ["eiffel"]},
    {"sample_id": "s2", "question": "What colour are bananas?",
     "reference": "Bananas are yellow.", "reference_ids": ["banana"]},
    {"sample_id": "s3", "question": "What does the Moon orbit?",
     "reference": "The Moon orbits the Earth.", "reference_ids": ["moon"]},
]  # fmt: skip


def genai_spans(
    path: Path, retrieved: dict[str, tuple[str, list[tuple[str | None, float]]]]
) -> Path:
    """An app's trace per question: a span with the sample id above a GenAI retrieval span
    (the environment must ask for content on spans)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    handler = TelemetryHandler(tracer_provider=provider)
    tracer = provider.get_tracer("app")
    for question, (sample_id, found) in retrieved.items():
        with (
            tracer.start_as_current_span("answer", attributes={"app.sample_id": sample_id}),
            handler.retrieval(data_source_id="kb") as retrieval,
        ):
            retrieval.query_text = question
            retrieval.documents = [RetrievalDocument(id=i, score=s) for i, s in found]
    path.write_text(otlp_json(exporter.get_finished_spans()))
    return path


@pytest.fixture(autouse=True)
def content_on_spans(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")


@pytest.fixture
def spans_file(tmp_path: Path) -> Path:
    return genai_spans(tmp_path / "spans.json", RETRIEVED)


@pytest.fixture
def references(tmp_path: Path) -> Path:
    path = tmp_path / "references.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in REFERENCES))
    return path


@pytest.mark.parametrize("join_on", ["question", "app.sample_id"])
def test_ids_and_scores_without_content(spans_file: Path, references: Path, join_on: str) -> None:
    traced = load_traces(spans_file, references, join_on=join_on)
    assert [s.sample_id for s in traced.samples] == ["s1", "s2"]
    first = traced.samples[0].retrieved_contexts
    assert [(c.id, c.score, c.rank, c.text) for c in first] == [
        ("eiffel", 0.9, 1, ""),
        ("moon", 0.2, 2, ""),
    ]
    assert traced.notes == [
        "3 retrieved documents have no content in the spans; metrics that read text see them "
        "as empty (give contents: id -> text)"
    ]
    (missing,) = traced.not_assessed
    assert (missing.sample_id, missing.question) == ("s3", "What does the Moon orbit?")
    report = evaluate(traced.samples, [RetrievalRecall()])  # ids need no content
    assert [r.score for r in report.results["retrieval_recall"]] == [1.0, 0.0]


def test_contents_fill_in_the_text_by_id(spans_file: Path, tmp_path: Path) -> None:
    contents = tmp_path / "docs.csv"
    contents.write_text("id,text\n" + "".join(f"{k},{v}\n" for k, v in TEXTS.items()))
    for given in (contents, TEXTS):
        traced = load_traces(spans_file, REFERENCES, contents=given)
        assert traced.notes == []
        assert [c.text for c in traced.samples[0].retrieved_contexts] == [
            TEXTS["eiffel"],
            TEXTS["moon"],
        ]
    recall = ContextRecall(ScriptedJudge(), claims="sentences", cache=ClaimCache())
    assert evaluate(traced.samples, [recall]).scores == {"context_recall": 0.5}


def test_a_list_of_requests_reads_as_one_file(spans_file: Path, tmp_path: Path) -> None:
    listed = tmp_path / "listed.json"
    listed.write_text(json.dumps([json.loads(spans_file.read_text())]))
    samples = load_traces(listed, REFERENCES).samples
    assert samples == load_traces(spans_file, REFERENCES).samples


def test_unscorable_results_and_documents_without_ids(tmp_path: Path) -> None:
    path = genai_spans(tmp_path / "spans.json", {"What colour are bananas?": ("s2", [
        ("banana", 0.9), (None, 0.5)])})  # fmt: skip
    no_ids = [dict(REFERENCES[1], reference_ids=None), REFERENCES[2]]
    traced = load_traces(path, no_ids)
    assert [c.id for c in traced.samples[0].retrieved_contexts] == ["banana", "2"]
    assert traced.notes[0].startswith("1 retrieved documents have no id")
    report = evaluate(traced.samples, [RetrievalRecall()])
    assert report.unscorable() == [0]
    out = tmp_path / "scored.json"
    traced.write_scores(out, report)
    (span,) = [
        span
        for resource in parse_otlp(out.read_text()).resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
        if span.name == "retrieval kb"
    ]
    written = {a.key: a.value.string_value for a in span.attributes if "evaluation" in a.key}
    assert written == {
        "evaluations.0.evaluation.name": "retrieval_recall",
        "evaluations.0.evaluation.label": "unscorable",
        "evaluations.0.evaluation.explanation": explanation(report.results["retrieval_recall"][0]),
        "evaluations.0.evaluation.annotator_kind": "CODE",
    }
    (event,) = [e for e in span.events if e.name == "gen_ai.evaluation.result"]
    assert {a.key: a.value.string_value for a in event.attributes} == {
        "gen_ai.evaluation.name": "retrieval_recall",
        "gen_ai.evaluation.score.label": "unscorable",
        "gen_ai.evaluation.explanation": explanation(report.results["retrieval_recall"][0]),
        "error.type": "_OTHER",  # no exception: the sample lacked what recall needs
    }


def test_error_type_names_the_failure_of_an_unscorable_result() -> None:
    failed = RecallResult(score=None, status="unscorable", reason="judge failed: JudgeError: x")
    assert error_type(failed) == "JudgeError"
    nested = failed.model_copy(update={"reason": "recall: judge failed: RateLimitError: 429"})
    assert error_type(nested) == "RateLimitError"
    assert error_type(failed.model_copy(update={"reason": "no response"})) == "_OTHER"
    assert error_type(RecallResult(score=0.5, status="scored")) is None


def test_bad_inputs_are_named(spans_file: Path, tmp_path: Path) -> None:
    other = tmp_path / "rows.jsonl"
    other.write_text(json.dumps({"question": "q", "reference": "r"}) + "\n")
    with pytest.raises(SampleError, match="neither OTLP JSON traces"):
        load_traces(other, REFERENCES)
    no_ids = [{k: v for k, v in row.items() if k != "sample_id"} for row in REFERENCES]
    with pytest.raises(SampleError, match="none has one"):
        load_traces(spans_file, no_ids, join_on="app.sample_id")


def test_cli_from_traces(
    spans_file: Path, references: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, scored = tmp_path / "results.jsonl", tmp_path / "scored.json"
    argv = [str(references), "--from-traces", str(spans_file), "--metric", "retrieval_recall"]
    code = main(["eval", *argv, "--id-column", "sample_id", "--join-on", "app.sample_id",
                 "--out", str(out), "--traces-out", str(scored)])  # fmt: skip
    printed = capsys.readouterr()
    assert code == 0
    assert "ragrecall eval: 2 of 2 samples" in printed.out
    assert "not assessed: 1 references had no retriever span" in printed.out
    assert "What does the Moon orbit?" in printed.out
    assert "have no content" in printed.err
    assert "(2 retriever spans)" in printed.out
    request = parse_otlp(scored.read_text())
    events = [
        {a.key: a.value for a in event.attributes}
        for resource in request.resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
        for event in span.events
        if event.name == "gen_ai.evaluation.result"
    ]
    assert [e["gen_ai.evaluation.score.value"].double_value for e in events] == [1.0, 0.0]
    assert sum(1 for _ in out.open()) == 2  # the results file holds the scored samples only
    assert main(["eval", *argv, "--out", str(out), "--traces-out", str(scored)]) == 0  # resumed
    assert "resuming: 2 samples already in" in capsys.readouterr().err
    assert scored.read_text().count("gen_ai.evaluation.result") == 2  # from the traces again
    assert main(["eval", str(references), "--traces-out", str(scored)]) == 2
    assert "--traces-out needs --from-traces" in capsys.readouterr().err


def test_cli_refuses_traces_that_match_no_reference(
    spans_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    references = tmp_path / "other.jsonl"
    references.write_text(json.dumps({"question": "Unrelated?", "reference": "No."}) + "\n")
    assert main(["eval", str(references), "--from-traces", str(spans_file)]) == 2
    err = capsys.readouterr().err
    assert "no retriever span matched any of the 1 references" in err
    assert "2 retrievals matched no reference" in err
