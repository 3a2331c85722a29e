"""load_traces on exports of a real LCEL chain: OpenInference's LangChain instrumentor into
the OTel SDK (OTLP JSON), and LangChain's run tracer as LangSmith runs."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from langchain_core.runnables import (
    Runnable,
    RunnableConfig,
    RunnableLambda,
    RunnablePassthrough,
)
from langchain_core.tracers.run_collector import RunCollectorCallbackHandler
from langchain_core.vectorstores import InMemoryVectorStore, VectorStoreRetriever
from langsmith._internal._serde import dumps_json  # how the LangSmith client serialises runs
from langsmith.run_trees import RunTree
from langsmith.schemas import Run
from openinference.instrumentation import get_evaluation_attributes
from openinference.instrumentation.langchain import LangChainInstrumentor
from otlp_export import otlp_json, otlp_lines, parse_otlp, recording

from ragrecall import ClaimCache, ContextRecall, RetrievalRecall, evaluate, load_traces
from ragrecall.adapters import claim_metadata, explanation
from ragrecall.testing import ScriptedJudge

RELEVANT = {
    "Where is the Eiffel Tower?": ["eiffel", "eiffel-1889"],
    "What happened in the Colosseum?": ["gladiators"],
    "Do cats purr?": ["cats"],
}
EXAMPLE = uuid.UUID(int=7)
UNASKED = {"user_input": "Where is Big Ben?", "reference": "Big Ben is in London."}


def references(questions: dict[str, str]) -> list[dict[str, Any]]:
    rows = [
        {"sample_id": f"q{i}", "user_input": q, "reference": a, "reference_ids": RELEVANT[q]}
        for i, (q, a) in enumerate(questions.items())
    ]
    return [*rows, {"sample_id": "unasked", **UNASKED}]


def traced_otlp(chain: Runnable[str, str], questions: dict[str, str]) -> list[Any]:
    with recording(LangChainInstrumentor()) as exporter:
        for i, question in enumerate(questions):
            chain.invoke(question, config={"metadata": {"sample_id": f"q{i}"}})
    return list(exporter.get_finished_spans())


def test_otlp_by_question(
    base_retriever: VectorStoreRetriever, make_chain: Any, questions: dict[str, str], tmp_path: Path
) -> None:
    chain = make_chain(base_retriever)
    path = tmp_path / "spans.json"
    path.write_text(otlp_json(traced_otlp(chain, questions)))
    traced = load_traces(path, references(questions))
    assert [s.user_input for s in traced.samples] == list(questions)
    for sample in traced.samples:
        assert sample.user_input is not None
        documents = base_retriever.invoke(sample.user_input)
        chunks = sample.retrieved_contexts
        assert [c.id for c in chunks] == [d.id for d in documents]  # from output.value
        assert [c.text for c in chunks] == [d.page_content for d in documents]
        assert [c.metadata for c in chunks] == [d.metadata for d in documents]
        assert sample.response == chain.invoke(sample.user_input)
        assert sample.sample_id is not None and sample.reference_ids is not None
    assert [(n.question, n.sample_id) for n in traced.not_assessed] == [
        (UNASKED["user_input"], "unasked")
    ]
    assert traced.unmatched == [] and traced.notes == []
    report = evaluate(traced.samples, [RetrievalRecall()])
    assert [r.score for r in report.results["retrieval_recall"]] == [1.0, 1.0, 1.0]


def test_otlp_lines_by_metadata_attribute(
    base_retriever: VectorStoreRetriever, make_chain: Any, questions: dict[str, str], tmp_path: Path
) -> None:
    """JSON lines with hex ids; the reference's wording differs, its id is in the metadata."""
    spans = traced_otlp(make_chain(base_retriever), questions)
    with recording(LangChainInstrumentor()) as exporter:
        make_chain(base_retriever).invoke("Is Rome old?")  # no reference: unmatched
    path = tmp_path / "spans.jsonl"
    path.write_text(otlp_lines([*spans, *exporter.get_finished_spans()]))
    reworded = [dict(row, user_input=f"({row['user_input']})") for row in references(questions)]
    assert load_traces(path, reworded).samples == []
    traced = load_traces(path, reworded, join_on="metadata.sample_id")
    assert sorted(str(s.sample_id) for s in traced.samples) == ["q0", "q1", "q2"]
    assert traced.unmatched == ["Is Rome old?"]
    assert [n.sample_id for n in traced.not_assessed] == ["unasked"]


def test_an_empty_retrieval_is_scored_not_left_out(
    store: InMemoryVectorStore, make_chain: Any, questions: dict[str, str], tmp_path: Path
) -> None:
    strict = store.as_retriever(search_kwargs={"filter": lambda doc: False})  # finds nothing
    assert strict.invoke("Do cats purr?") == []
    path = tmp_path / "spans.json"
    path.write_text(otlp_json(traced_otlp(make_chain(strict), {"Do cats purr?": ""})))
    traced = load_traces(path, references(questions))
    (sample,) = traced.samples
    assert sample.user_input == "Do cats purr?" and sample.retrieved_contexts == []
    assert evaluate(traced.samples, [RetrievalRecall()]).scores == {"retrieval_recall": 0.0}
    assert len(traced.not_assessed) == 3  # the others: no span, not 0


def test_rewritten_queries_join_by_the_chains_input_and_merge(
    store: InMemoryVectorStore, questions: dict[str, str], tmp_path: Path
) -> None:
    """Two retrievers on a rewritten query: one sample per trace, each document once."""
    rewrite = RunnableLambda(lambda q: f"search: {q}")
    narrow, wide = (store.as_retriever(search_kwargs={"k": k}) for k in (1, 3))
    chain = {
        "context": rewrite | narrow,
        "more": rewrite | wide,
        "question": RunnablePassthrough(),
    } | RunnableLambda(lambda inputs: " ".join(d.page_content for d in inputs["context"]))
    path = tmp_path / "spans.json"
    path.write_text(otlp_json(traced_otlp(chain, {"Do cats purr?": ""})))
    (sample,) = load_traces(path, references(questions)).samples
    seen = [d.id for d in narrow.invoke("search: Do cats purr?")]
    seen += [d.id for d in wide.invoke("search: Do cats purr?") if d.id not in seen]
    assert [c.id for c in sample.retrieved_contexts] == seen
    assert [c.rank for c in sample.retrieved_contexts] == [1, 2, 3]


def test_scores_written_back_as_evaluations(
    base_retriever: VectorStoreRetriever, make_chain: Any, questions: dict[str, str], tmp_path: Path
) -> None:
    path, out = tmp_path / "spans.json", tmp_path / "scored.json"
    path.write_text(otlp_json(traced_otlp(make_chain(base_retriever), questions)))
    traced = load_traces(path, references(questions))
    recall = ContextRecall(ScriptedJudge(), claims="sentences", cache=ClaimCache())
    report = evaluate(traced.samples, [recall, RetrievalRecall()])
    assert traced.write_scores(out, report) == 3
    request = parse_otlp(out.read_text())  # protobuf accepts the file
    retrievers = [
        span
        for resource in request.resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
        if span.name == "VectorStoreRetriever"
    ]
    first = retrievers[0]
    attributes = {a.key: a.value for a in first.attributes}
    result, listed = report.results["context_recall"][0], report.results["retrieval_recall"][0]
    expected = get_evaluation_attributes(
        evaluations=[
            {
                "name": "context_recall",
                "score": result.score,
                "explanation": explanation(result),
                "annotator_kind": "LLM",
            },
            {
                "name": "retrieval_recall",
                "score": 1.0,
                "explanation": explanation(listed),
                "annotator_kind": "CODE",
            },
        ]
    )
    found = {k: _plain(v) for k, v in attributes.items() if k.startswith("evaluations.")}
    assert found == {k: v for k, v in expected.items() if v != ""}
    (event, _) = [e for e in first.events if e.name == "gen_ai.evaluation.result"]
    event_attributes = {a.key: _plain(a.value) for a in event.attributes}
    assert event_attributes["gen_ai.evaluation.name"] == "context_recall"
    assert event_attributes["gen_ai.evaluation.score.value"] == result.score
    again = load_traces(out, references(questions))  # still readable by ragrecall
    assert [s.retrieved_contexts for s in again.samples] == [
        s.retrieved_contexts for s in traced.samples
    ]


# An agent's three searches for one question: the third finds "eiffel" again, and "cats".
SEARCHES = ["Eiffel Tower location", "Colosseum in Rome", "cats purr Eiffel"]
AGENT = {
    "sample_id": "agent",
    "user_input": "Tell me about Paris and cats.",
    "reference": (
        "The Eiffel Tower is in Paris. Cats purr when they are content. "
        "Big Ben is a bell in London."
    ),
}


def test_an_agents_retrieval_steps_make_one_sample(
    base_retriever: VectorStoreRetriever, tmp_path: Path
) -> None:
    """One agent run searches three times: recall is over the union, and each supported
    claim says the step (and query) that first retrieved its evidence."""

    def agent(question: str, config: RunnableConfig) -> str:
        found = [doc for query in SEARCHES for doc in base_retriever.invoke(query, config)]
        return " ".join(dict.fromkeys(doc.page_content for doc in found))

    with recording(LangChainInstrumentor()) as exporter:
        RunnableLambda(agent).invoke(str(AGENT["user_input"]))
    spans = list(exporter.get_finished_spans())
    assert [s.name for s in spans].count("VectorStoreRetriever") == 3
    path, out = tmp_path / "spans.json", tmp_path / "scored.json"
    path.write_text(otlp_json(spans))
    traced = load_traces(path, [AGENT])
    (sample,) = traced.samples
    steps = [[d.id for d in base_retriever.invoke(query)] for query in SEARCHES]
    assert steps == [["eiffel", "eiffel-1889"], ["colosseum", "gladiators"], ["cats", "eiffel"]]
    union = [("eiffel", 1), ("eiffel-1889", 1), ("colosseum", 2), ("gladiators", 2), ("cats", 3)]
    assert [(c.id, c.metadata["retrieval_step"]) for c in sample.retrieved_contexts] == union
    assert [c.metadata["retrieval_query"] for c in sample.retrieved_contexts] == [
        SEARCHES[step - 1] for _, step in union
    ]
    recall = ContextRecall(ScriptedJudge(), claims="sentences")
    report = evaluate(traced.samples, [recall])
    result = report.results["context_recall"][0]
    assert result.score == pytest.approx(2 / 3)
    fields = claim_metadata(result, sample)
    assert [(f["supported"], f["chunk_ids"], f["step"]) for f in fields] == [
        (True, ["eiffel"], 1),
        (True, ["cats"], 3),
        (False, [], None),
    ]
    assert fields[1]["query"] == "cats purr Eiffel"
    lines = explanation(result, sample).splitlines()
    assert lines[1].endswith('retrieved at step 1 (query "Eiffel Tower location")')
    assert lines[2].endswith('retrieved at step 3 (query "cats purr Eiffel")')
    assert all("step" not in f for f in claim_metadata(result))  # without the sample: as before
    assert "step" not in explanation(result)
    assert traced.write_scores(out, report) == 3  # each step's span carries the result
    retrievers = [
        span
        for resource in parse_otlp(out.read_text()).resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
        if span.name == "VectorStoreRetriever"
    ]
    for span in retrievers:
        attributes = {a.key: _plain(a.value) for a in span.attributes}
        assert attributes["evaluations.0.evaluation.explanation"] == explanation(result, sample)
        (event,) = [e for e in span.events if e.name == "gen_ai.evaluation.result"]
        written = {a.key: _plain(a.value) for a in event.attributes}
        assert json.loads(written["ragrecall.evaluation.verdicts"]) == fields


def _plain(value: Any) -> Any:
    kind = value.WhichOneof("value")
    return getattr(value, kind)


def langsmith_runs(chain: Runnable[str, str], questions: dict[str, str]) -> list[RunTree]:
    """The root runs of a traced chain, one per question; the first is marked as run on a
    dataset example (as ``langsmith.evaluate`` marks its runs)."""
    collector = RunCollectorCallbackHandler()
    for i, question in enumerate(questions):
        chain.invoke(
            question, config={"callbacks": [collector], "metadata": {"sample_id": f"q{i}"}}
        )
    roots: list[RunTree] = collector.traced_runs  # type: ignore[assignment]
    roots[0].reference_example_id = EXAMPLE
    return roots


def as_listed(tree: RunTree) -> dict[str, Any]:
    """A run as the LangSmith API returns it (``langsmith.schemas.Run``), as JSON."""
    posted = json.loads(dumps_json(tree._get_dicts_safe()))  # what the client uploads
    return json.loads(Run.model_validate(posted).model_dump_json())  # type: ignore[no-any-return]


def export(roots: list[RunTree], layout: str) -> str:
    if layout == "nested":
        return json.dumps([_nested(root) for root in roots])
    runs = [as_listed(run) for root in roots for run in _flat(root)]
    if layout == "lines":
        return "".join(json.dumps(run) + "\n" for run in runs)
    return json.dumps({"runs": runs} if layout == "runs" else runs)


def _flat(tree: RunTree) -> list[RunTree]:
    return [tree, *(run for child in tree.child_runs for run in _flat(child))]


def _nested(tree: RunTree) -> dict[str, Any]:
    return as_listed(tree) | {"child_runs": [_nested(child) for child in tree.child_runs]}


@pytest.mark.parametrize(
    ("layout", "join_on"),
    [
        ("list", "question"),
        ("lines", "metadata.sample_id"),
        ("runs", "question"),
        ("nested", "metadata.sample_id"),
    ],
)
def test_langsmith_runs(
    base_retriever: VectorStoreRetriever,
    make_chain: Any,
    questions: dict[str, str],
    tmp_path: Path,
    layout: str,
    join_on: str,
) -> None:
    path = tmp_path / "runs.json"
    path.write_text(export(langsmith_runs(make_chain(base_retriever), questions), layout))
    traced = load_traces(path, references(questions), join_on=join_on)
    assert [s.sample_id for s in traced.samples] == ["q0", "q1", "q2"]
    for sample in traced.samples:
        documents = base_retriever.invoke(str(sample.user_input))
        assert [(c.id, c.text) for c in sample.retrieved_contexts] == [
            (d.id, d.page_content) for d in documents
        ]
        assert sample.response == " ".join(d.page_content for d in documents)
    assert [n.sample_id for n in traced.not_assessed] == ["unasked"]
    with pytest.raises(ValueError, match="LangSmith"):
        traced.write_scores(tmp_path / "out.json", [None] * 3)


def test_langsmith_runs_by_dataset_example(
    base_retriever: VectorStoreRetriever, make_chain: Any, questions: dict[str, str], tmp_path: Path
) -> None:
    path = tmp_path / "runs.json"
    path.write_text(export(langsmith_runs(make_chain(base_retriever), questions), "list"))
    refs = [dict(row, sample_id=str(EXAMPLE)) for row in references(questions)[:1]]
    traced = load_traces(path, refs, join_on="reference_example_id")
    assert [s.user_input for s in traced.samples] == list(questions)[:1]
    assert len(traced.unmatched) == 2
