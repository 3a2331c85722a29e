"""Annotations built from ragrecall's results on traces (the posting to a real Phoenix is in
tests/system): one per retriever span and metric, with name, score, label and explanation;
an unscorable result has the label ``unscorable`` and its ``error.type``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from phoenix_ragrecall import annotations_from_traces_out, span_annotations

from ragrecall import ContextRecall, RetrievalRecall, evaluate, load_traces
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
    assert recall["result"] == {
        "score": 0.5,
        "explanation": 'missing: ["The Eiffel Tower was finished in 1889."]',
    }
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
