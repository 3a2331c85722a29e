"""Against a real Phoenix server (``phoenix serve`` on 127.0.0.1, started here from its own
venv, .venv-phoenix, data in a temporary folder): a LangChain retriever traced by
OpenInference sends its spans to Phoenix and to an OTLP JSON file; ragrecall scores the file's
retrievals; the scores posted as span annotations come back from Phoenix's API with name,
score, label and explanation."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from phoenix.client import Client
from phoenix.client.helpers.spans import get_input_output_context
from phoenix.evals import evaluate_dataframe
from phoenix.evals.utils import to_annotation_dataframe
from phoenix_ragrecall import RecallEvaluator, log_span_annotations, log_traces_out
from phoenix_ragrecall.__main__ import main as post
from phoenix_server import phoenix_server, wait_ingested

from ragrecall import ContextRecall, RetrievalRecall, evaluate, load_traces
from ragrecall.adapters import claim_metadata, explanation
from ragrecall.cli import main

pytestmark = pytest.mark.system

PROJECT = "ragrecall-tests"  # the project the test spans name (conftest.traced)


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Phoenix server of the tests' own; its base URL."""
    with phoenix_server(tmp_path_factory.mktemp("phoenix")) as url:
        yield url


def annotations(client: Client, span_ids: list[str]) -> dict[tuple[str, str], Any]:
    """The annotations Phoenix's API returns, by (span id, name)."""
    got = client.spans.get_span_annotations(span_ids=span_ids, project_identifier=PROJECT)
    return {(a["span_id"], a["name"]): a for a in got}


def test_scores_posted_from_python_are_phoenix_span_annotations(
    phoenix: str, trace_questions: Any, references: list[dict[str, Any]], judge: Any
) -> None:
    client = Client(base_url=phoenix)
    run = trace_questions(OTLPSpanExporter(endpoint=f"{phoenix}/v1/traces"))
    eiffel, cats = run.span_ids["Where is the Eiffel Tower?"], run.span_ids["Do cats purr?"]
    wait_ingested(client, PROJECT, [eiffel, cats])
    traced = load_traces(run.path, references)
    report = evaluate(traced.samples, [ContextRecall(judge, claims="sentences"), RetrievalRecall()])
    assert log_span_annotations(traced, report, client) == 4
    found = annotations(client, [eiffel, cats])
    recall = found[eiffel, "context_recall"]
    assert recall["annotator_kind"] == "LLM"
    assert recall["result"]["score"] == 0.5
    assert recall["result"]["explanation"] == explanation(report.results["context_recall"][0])
    assert recall["metadata"] == {
        "source": "ragrecall",
        "verdicts": claim_metadata(report.results["context_recall"][0]),
    }
    assert found[cats, "context_recall"]["result"]["score"] == 1.0
    unscorable = found[cats, "retrieval_recall"]  # no reference_ids: a label, not a 0
    assert unscorable["annotator_kind"] == "CODE"
    assert unscorable["result"]["label"] == "unscorable"
    assert unscorable["result"]["score"] is None
    assert "nothing known to be relevant" in unscorable["result"]["explanation"]
    assert unscorable["metadata"] == {"source": "ragrecall", "error.type": "_OTHER"}


def test_scores_of_eval_from_traces_posted_from_its_traces_out(
    phoenix: str,
    trace_questions: Any,
    references: list[dict[str, Any]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    client = Client(base_url=phoenix)
    run = trace_questions(OTLPSpanExporter(endpoint=f"{phoenix}/v1/traces"))
    eiffel = run.span_ids["Where is the Eiffel Tower?"]
    wait_ingested(client, PROJECT, [eiffel])
    rows = tmp_path / "references.jsonl"
    rows.write_text("".join(json.dumps(row) + "\n" for row in references))
    scored = tmp_path / "scored.json"
    argv = ["eval", str(rows), "--from-traces", str(run.path), "--metric", "retrieval_recall"]
    main([*argv, "--traces-out", str(scored)])
    assert post(["--base-url", phoenix, str(scored)]) == 0
    assert "2 span annotations posted" in capsys.readouterr().out
    assert log_traces_out(scored, client) == 2  # posted again: the same annotations, updated
    found = annotations(client, [eiffel])
    assert [name for _, name in found] == ["retrieval_recall"]  # once, though posted twice
    ids = found[eiffel, "retrieval_recall"]
    assert ids["result"]["score"] == 0.5  # k=1: one of the two relevant documents
    assert ids["annotator_kind"] == "CODE"


def test_the_evaluator_in_phoenixs_own_round_trip(
    phoenix: str, trace_questions: Any, references: list[dict[str, Any]], judge: Any
) -> None:
    """Phoenix's helpers pull the questions and retrieved texts of a project, phoenix-evals
    runs the evaluator, and Phoenix's own annotation frame posts the scores back."""

    client = Client(base_url=phoenix)
    run = trace_questions(OTLPSpanExporter(endpoint=f"{phoenix}/v1/traces"))
    eiffel = run.span_ids["Where is the Eiffel Tower?"]
    wait_ingested(client, PROJECT, list(run.span_ids.values()))
    frame = get_input_output_context(client, project_identifier=PROJECT)
    assert frame is not None
    gold = {row["user_input"]: row["reference"] for row in references}
    frame = frame[frame["input"].isin(gold)].copy()
    frame["reference"] = frame["input"].map(gold)
    evaluator = RecallEvaluator("context_recall", judge, claims="sentences", name="recall_rt")
    scored = evaluate_dataframe(dataframe=frame, evaluators=[evaluator], hide_tqdm_bar=True)
    client.spans.log_span_annotations_dataframe(
        dataframe=to_annotation_dataframe(scored), sync=True
    )
    found = annotations(client, [eiffel])
    recall = found[eiffel, "recall_rt"]  # the retriever is the root span here
    assert recall["result"]["score"] == 0.5
    assert recall["result"]["explanation"].startswith("1 of 2 claims supported.")
