"""Annotations built from ragrecall's results on traces (the posting to a real Phoenix is in
tests/system): one per retriever span and metric, with name, score, label and explanation,
the verdicts in the metadata; an unscorable result has the label ``unscorable`` and its
``error.type``. MLflow, Phoenix and the spans word a result alike."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mlflow_ragrecall import as_feedback
from phoenix_ragrecall import annotations_from_traces_out, span_annotations

from ragrecall import ContextRecall, RetrievalRecall, evaluate, load_traces
from ragrecall.adapters import claim_metadata, explanation
from ragrecall.cli import main


def test_one_annotation_per_retriever_span_and_metric(
    trace_questions: Any, references: list[dict[str, Any]], judge: Any
) -> None:
    run = trace_questions()
    ids = run.span_ids
    samples = load_traces(run.path, references)
    report = evaluate(
        samples.samples, [ContextRecall(judge, claims="sentences"), RetrievalRecall()]
    )
    annotations = sorted(span_annotations(samples, report), key=lambda a: (a["span_id"], a["name"]))
    eiffel, cats = ids["Where is the Eiffel Tower?"], ids["Do cats purr?"]
    assert [(a["span_id"], a["name"]) for a in annotations] == sorted(
        [(eiffel, "context_recall"), (eiffel, "retrieval_recall"),
         (cats, "context_recall"), (cats, "retrieval_recall")]
    )  # fmt: skip
    by_key = {(a["span_id"], a["name"]): a for a in annotations}
    recall = by_key[eiffel, "context_recall"]
    assert recall["annotator_kind"] == "LLM"
    assert recall["result"]["score"] == 0.5
    assert recall["result"]["explanation"].splitlines() == [
        "1 of 2 claims supported.",
        "- supported: The Eiffel Tower is in Paris. "
        '(chunk eiffel: "The Eiffel Tower is in Paris.")',
        "- missing: The Eiffel Tower was finished in 1889. (the judge found no support)",
    ]
    assert recall["metadata"]["verdicts"] == [
        {"claim": "The Eiffel Tower is in Paris.", "supported": True, "chunk_ids": ["eiffel"],
         "evidence": "The Eiffel Tower is in Paris.", "p_supported": None},
        {"claim": "The Eiffel Tower was finished in 1889.", "supported": False, "chunk_ids": [],
         "evidence": None, "p_supported": None},
    ]  # fmt: skip
    unknown = by_key[cats, "retrieval_recall"]  # no reference_ids: unscorable, not 0
    assert unknown["annotator_kind"] == "CODE"
    assert unknown["result"]["label"] == "unscorable" and "score" not in unknown["result"]
    assert unknown["metadata"] == {"source": "ragrecall", "error.type": "_OTHER"}


def test_the_annotations_of_a_traces_out_file_are_the_same(
    trace_questions: Any, references: list[dict[str, Any]], tmp_path: Path
) -> None:
    path = trace_questions().path
    rows = tmp_path / "references.jsonl"
    rows.write_text("".join(json.dumps(row) + "\n" for row in references))
    scored = tmp_path / "scored.json"
    argv = ["eval", str(rows), "--from-traces", str(path), "--metric", "retrieval_recall"]
    assert main([*argv, "--traces-out", str(scored)]) in (0, 1)
    from_file = annotations_from_traces_out(scored)
    samples = load_traces(path, references)
    from_python = span_annotations(samples, evaluate(samples.samples, [RetrievalRecall()]))

    def key(a: Any) -> str:
        return str(a["span_id"])

    assert sorted(from_file, key=key) == sorted(from_python, key=key)
    assert {a["result"].get("label") for a in from_file} == {None, "unscorable"}


def test_mlflow_phoenix_and_the_spans_explain_a_result_alike(
    trace_questions: Any, references: list[dict[str, Any]], judge: Any, tmp_path: Path
) -> None:
    """One wording (``ragrecall.adapters.explanation``) and one set of per-claim fields, whether
    the result reaches MLflow, Phoenix or the spans written back."""
    path = trace_questions().path
    traced = load_traces(path, references)
    report = evaluate(traced.samples, [ContextRecall(judge, claims="sentences")])
    result = report.results["context_recall"][0]
    scored = tmp_path / "scored.json"
    traced.write_scores(scored, report)
    spans = {a["span_id"]: a for a in span_annotations(traced, report)}
    written = {a["span_id"]: a for a in annotations_from_traces_out(scored)}
    phoenix = next(a for a in spans.values() if a["result"]["score"] == result.score)
    feedback = as_feedback("context_recall", result)
    texts = [
        feedback.rationale,
        phoenix["result"]["explanation"],
        written[phoenix["span_id"]]["result"]["explanation"],
    ]
    assert texts == [explanation(result)] * 3 and texts[0].startswith("1 of 2 claims supported.")
    fields = [
        json.loads(feedback.metadata["verdicts"]),
        phoenix["metadata"]["verdicts"],
        written[phoenix["span_id"]]["metadata"]["verdicts"],
    ]
    assert fields == [claim_metadata(result)] * 3
    assert [v["supported"] for v in fields[0]] == [True, False]
    assert fields[0][0]["chunk_ids"] == ["eiffel"]
    assert fields[0][0]["evidence"] == "The Eiffel Tower is in Paris."
