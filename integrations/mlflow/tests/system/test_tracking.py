"""Against a real MLflow tracking store (SQLite in a temporary folder, no server): a traced
LangChain retriever (MLflow's langchain autolog) or ``mlflow.trace`` RETRIEVER spans,
``mlflow.genai.evaluate`` with the scorers, the Feedback read back from the store; and
``mlflow.models.evaluate`` with ``make_metric``. The judge is the offline keyword judge."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mlflow
import pandas as pd
import pytest
from hashing_embeddings import HashingEmbeddings
from langchain_core.documents import Document
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_ragrecall import RecallRetriever
from mlflow.entities import Feedback, SpanType, Trace
from mlflow_ragrecall import (
    ContextPrecisionScorer,
    ContextRecallScorer,
    RetrievalRecallScorer,
    make_metric,
)

from ragrecall import ContextRecall

pytestmark = pytest.mark.system

EIFFEL = "The Eiffel Tower is in Paris. The Eiffel Tower was finished in 1889."
CATS = "Cats purr when they are content."
DATA = [
    {
        "inputs": {"question": "Where is the Eiffel Tower?"},
        "expectations": {"expected_response": EIFFEL, "reference_ids": ["eiffel", "eiffel-1889"]},
    },
    {"inputs": {"question": "Do cats purr?"}, "expectations": {"expected_response": CATS}},
]


@pytest.fixture(scope="module")
def tracking(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A SQLite tracking store in a temporary folder (and no usage telemetry sent)."""
    root = tmp_path_factory.mktemp("mlflow")
    previous = mlflow.get_tracking_uri()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")
        mlflow.set_tracking_uri(f"sqlite:///{root / 'mlflow.db'}")
        yield root
        mlflow.set_tracking_uri(previous)


@pytest.fixture
def experiment(tracking: Path, request: pytest.FixtureRequest) -> str:
    name = request.node.name
    experiment_id = mlflow.create_experiment(name, artifact_location=(tracking / name).as_uri())
    mlflow.set_experiment(experiment_id=experiment_id)
    return experiment_id


@pytest.fixture
def autolog() -> Iterator[None]:
    mlflow.langchain.autolog()
    yield
    mlflow.langchain.autolog(disable=True)


def stored(run_id: str) -> list[Trace]:
    """The run's traces of the app as the store holds them, first question first (with
    langchain autolog on, the judge's calls are traces of the run too: they have no
    assessments)."""
    traces = mlflow.search_traces(run_id=run_id, return_type="list")
    traces = [t for t in traces if t.info.assessments]
    return sorted(traces, key=lambda t: "cats" in str(t.data.spans[0].inputs).lower())


def feedback(trace: Trace, name: str) -> list[Feedback]:
    return [a for a in trace.info.assessments if isinstance(a, Feedback) and a.name == name]


def retriever_span_ids(trace: Trace) -> list[str]:
    return [s.span_id for s in trace.data.spans if s.span_type == SpanType.RETRIEVER]


def test_genai_evaluate_scores_the_langchain_retrievers_spans(
    experiment: str, autolog: None, store: InMemoryVectorStore, judge: Any
) -> None:
    retriever = store.as_retriever(search_kwargs={"k": 1})
    scorers = [
        ContextRecallScorer(judge, claims="sentences"),
        ContextPrecisionScorer(judge),
        RetrievalRecallScorer(),
    ]
    results = mlflow.genai.evaluate(
        data=DATA, predict_fn=lambda question: retriever.invoke(question), scorers=scorers
    )
    assert results.metrics["context_recall/mean"] == pytest.approx(0.75)  # 1/2 and 1/1
    assert results.metrics["context_precision/mean"] == pytest.approx(1.0)
    assert results.metrics["retrieval_recall/mean"] == pytest.approx(0.5)
    eiffel, cats = stored(results.run_id)
    (recall,) = feedback(eiffel, "context_recall")
    assert recall.value == 0.5 and recall.span_id == retriever_span_ids(eiffel)[0]  # the root
    assert recall.metadata is not None
    assert recall.metadata["retriever_span_id"] == retriever_span_ids(eiffel)[0]
    assert recall.rationale is not None and recall.rationale.splitlines() == [
        "1 of 2 claims supported.",
        "- supported: The Eiffel Tower is in Paris. "
        '(chunk eiffel: "The Eiffel Tower is in Paris.")',
        "- missing: The Eiffel Tower was finished in 1889. (the judge found no support)",
    ]
    assert recall.metadata is not None and recall.metadata["mlflow.scorer.framework"] == "ragrecall"
    (unknown,) = feedback(cats, "retrieval_recall")  # no reference_ids: a value, not a crash
    assert unknown.value is None and unknown.error is not None
    assert unknown.error.error_code == "_OTHER"
    assert "nothing known to be relevant" in str(unknown.error.error_message)


def test_a_recall_retriever_around_a_retriever_is_one_retrieval(
    experiment: str, autolog: None, store: InMemoryVectorStore, judge: Any
) -> None:
    wrapped = RecallRetriever(
        store.as_retriever(),
        k=2,
        metrics=[ContextRecall(judge, claims="sentences")],
        no_reference="skip",  # the judge's calls for queries without a reference: not here
    )
    scorer = ContextRecallScorer(judge, claims="sentences")
    with wrapped:
        results = mlflow.genai.evaluate(
            data=DATA, predict_fn=lambda question: wrapped.invoke(question), scorers=[scorer]
        )
    eiffel, _ = stored(results.run_id)
    outer, _ = retriever_span_ids(eiffel)  # the wrapper's span, then the wrapped one's
    (recall,) = feedback(eiffel, "context_recall")
    assert recall.metadata is not None and recall.value == 1.0  # k=2: both Eiffel documents
    assert recall.metadata["retriever_span_id"] == outer


def test_mlflow_trace_spans_and_expectations_logged_on_the_traces(
    experiment: str, judge: Any
) -> None:
    """An app traced by hand, two retrievals a question; the expectations are logged on the
    traces afterwards, and the traces themselves are the evaluation data."""

    @mlflow.trace(span_type=SpanType.RETRIEVER)
    def search(query: str) -> list[dict[str, Any]]:
        found = [
            ("The Eiffel Tower is in Paris.", "wiki/eiffel"),
            ("Cats purr when they are content.", "wiki/cats"),
        ]
        return [
            {"page_content": text, "metadata": {"doc_uri": uri}}
            for text, uri in found
            if set(query.lower().split()) & set(text.lower().split())
        ]

    @mlflow.trace
    def app(question: str) -> str:
        documents = search(question) + search("tower")
        return " ".join(d["page_content"] for d in documents)

    for row in DATA:
        app(row["inputs"]["question"])
        trace_id = mlflow.get_last_active_trace_id()
        assert trace_id is not None
        mlflow.flush_trace_async_logging()  # the trace is in the store before its expectation
        mlflow.log_expectation(
            trace_id=trace_id,
            name="expected_response",
            value=row["expectations"]["expected_response"],
        )
    traces = mlflow.search_traces(locations=[experiment], flush=True)
    results = mlflow.genai.evaluate(
        data=traces, scorers=[ContextRecallScorer(judge, claims="sentences")]
    )
    eiffel, cats = stored(results.run_id)
    assert len(retriever_span_ids(eiffel)) == 2
    # one Feedback per retrieval; MLflow puts them on the root span, ours names the retriever's
    by_span = {f.metadata["retriever_span_id"]: f for f in feedback(eiffel, "context_recall")}
    assert set(by_span) == set(retriever_span_ids(eiffel))
    assert [f.value for f in by_span.values()] == [0.5, 0.5]
    assert "(chunk wiki/eiffel:" in str(next(iter(by_span.values())).rationale)
    assert sorted(f.value for f in feedback(cats, "context_recall")) == [0.0, 1.0]


def test_a_judge_that_is_down_leaves_errors_and_the_evaluation_goes_on(
    experiment: str, autolog: None, failing_judge: Any
) -> None:
    scorers = [
        ContextRecallScorer(failing_judge, claims="sentences", max_retries=0),
        RetrievalRecallScorer(),
    ]
    # Each document says more than the reference's sentence, so the judge is asked (a sentence
    # a document states word for word would be supported without it).
    store = InMemoryVectorStore(HashingEmbeddings())
    store.add_documents(
        [
            Document("The Eiffel Tower is in Paris, France.", id="eiffel"),
            Document("The Eiffel Tower was finished in 1889, for a fair.", id="eiffel-1889"),
            Document("Cats purr when they are content, mostly.", id="cats"),
        ]
    )
    retriever = store.as_retriever(search_kwargs={"k": 2})
    results = mlflow.genai.evaluate(
        data=DATA, predict_fn=lambda question: retriever.invoke(question), scorers=scorers
    )
    eiffel, cats = stored(results.run_id)
    for trace in (eiffel, cats):
        (down,) = feedback(trace, "context_recall")
        assert down.value is None and down.error is not None
        assert down.error.error_code == "ConnectionError"
        assert "the judge is down" in str(down.error.error_message)
    (ids,) = feedback(eiffel, "retrieval_recall")
    assert ids.value == 1.0 and ids.error is None


def test_classic_evaluate_logs_make_metrics_scores_and_justifications(
    experiment: str, judge: Any
) -> None:
    frame = pd.DataFrame(
        {
            "question": ["Where is the Eiffel Tower?", "Do cats purr?", "Where is it?"],
            "answer": ["In Paris.", "Yes.", "Somewhere."],
            "reference": [EIFFEL, CATS, ""],
            "contexts": [["The Eiffel Tower is in Paris."], [CATS], ["The Colosseum is in Rome."]],
        }
    )
    with mlflow.start_run() as run:
        results = mlflow.models.evaluate(
            data=frame,
            predictions="answer",
            targets="reference",
            extra_metrics=[make_metric("context_recall", judge, claims="sentences")],
            evaluator_config={"col_mapping": {"context": "contexts", "inputs": "question"}},
        )
    logged = mlflow.get_run(run.info.run_id).data.metrics
    assert logged["context_recall/mean"] == pytest.approx(0.75)
    assert logged["context_recall/unscorable"] == 1.0
    table = results.tables["eval_results_table"]
    assert table["context_recall/score"].tolist()[:2] == [0.5, 1.0]
    justification = table["context_recall/justification"].tolist()
    assert justification[0].startswith("1 of 2 claims supported.")
    assert justification[2] == "Unscorable: no claims: the reference is empty"
