"""RecallEvaluator on real langsmith Run / Example objects, and inside langsmith.evaluate."""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
import requests
from langchain_core.documents import Document
from langchain_core.load import dumpd
from langchain_core.tracers.run_collector import RunCollectorCallbackHandler
from langchain_core.vectorstores import VectorStoreRetriever
from langchain_ragrecall import RecallEvaluator, RecallRetriever
from langsmith import Client, evaluate
from langsmith.schemas import Example, Run

from ragrecall import ClaimCache, ContextRecall
from ragrecall.testing import ScriptedJudge

Q = "Where is the Eiffel Tower?"
REF = "The Eiffel Tower is in Paris. The Eiffel Tower was finished in 1889."
T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)


def recall(judge: Any = None) -> ContextRecall:
    return ContextRecall(judge or ScriptedJudge(), claims="sentences", cache=ClaimCache())


def run(run_type: str, name: str, at: int, *, children: list[Run] = (), **kw: Any) -> Run:  # type: ignore[assignment]
    return Run(
        id=uuid.uuid4(),
        name=name,
        run_type=run_type,
        start_time=T0 + timedelta(seconds=at),
        trace_id=uuid.uuid4(),
        child_runs=list(children),
        **kw,
    )


def example(outputs: dict[str, Any] | None = None, **inputs: Any) -> Example:
    return Example(
        id=uuid.uuid4(), inputs=inputs or {"question": Q}, outputs={"answer": REF} | (outputs or {})
    )


def traced_run() -> Run:
    """chain -> [parallel -> retriever (Documents)], retriever (dicts) wrapping a retriever."""
    # Each says more than the sentence of REF it supports: the judge is asked.
    paris = Document("The Eiffel Tower is in Paris, France.", id="eiffel")
    built = {
        "page_content": "The Eiffel Tower was finished in 1889, for a fair.",
        "id": "eiffel-1889",
    }
    inner = run("retriever", "inner", 3, outputs={"documents": [dumpd(Document("dup", id="d"))]})
    return run(
        "chain",
        "RAG",
        0,
        inputs={"question": Q},
        outputs={"output": "..."},
        children=[
            run("retriever", "wrapped", 2, outputs={"documents": [built]}, children=[inner]),
            run(
                "chain",
                "RunnableParallel",
                1,
                children=[run("retriever", "narrow", 1, outputs={"documents": [paris]})],
            ),
            run("llm", "model", 4, outputs={"generations": []}),
        ],
    )


def test_scores_the_documents_of_the_retriever_child_runs() -> None:
    evaluator = RecallEvaluator(recall())
    sample = evaluator.sample(traced_run(), example())
    assert sample.user_input == Q and sample.reference == REF
    assert [c.id for c in sample.retrieved_contexts] == ["eiffel", "eiffel-1889"]  # in time order
    assert evaluator(traced_run(), example()) == {
        "key": "context_recall",
        "score": 1.0,
        "comment": "all 2 claims supported",
    }


def test_the_comment_lists_the_missing_claims() -> None:
    reference = "The Eiffel Tower is in Paris. Big Ben is a bell in London."
    out = RecallEvaluator(recall(), key="recall")(traced_run(), example({"answer": reference}))
    assert out["key"] == "recall" and out["score"] == 0.5
    assert out["comment"] == "missing: " + json.dumps(["Big Ben is a bell in London."])


def test_unscorable_gives_no_score_and_the_reason() -> None:
    out = RecallEvaluator(recall())(traced_run(), example({"answer": ""}))
    assert out["score"] is None and "reference is empty" in out["comment"]
    broken = RecallEvaluator(recall(ScriptedJudge(reply=lambda m: ValueError("judge down"))))
    out = broken(traced_run(), example())
    assert out["score"] is None and "judge down" in out["comment"]


def test_configurable_keys_and_fallbacks() -> None:
    ex = Example(id=uuid.uuid4(), inputs={"q": Q, "n": 3}, outputs={"gold": REF, "n": 1})
    sample = RecallEvaluator(recall(), question_key="q", reference_key="gold").sample(
        traced_run(), ex
    )
    assert (sample.user_input, sample.reference) == (Q, REF)
    only = Example(id=uuid.uuid4(), inputs={"text": Q}, outputs={"truth": REF})
    sample = RecallEvaluator(recall()).sample(traced_run(), only)  # the only string value
    assert (sample.user_input, sample.reference) == (Q, REF)
    no_retriever = run("chain", "plain", 0)
    assert RecallEvaluator(recall()).sample(no_retriever, example()).retrieved_contexts == []


async def test_async_call() -> None:
    out = await RecallEvaluator(recall()).acall(traced_run(), example())
    assert out["score"] == 1.0


def test_a_run_traced_from_a_real_chain(
    base_retriever: VectorStoreRetriever, make_chain: Any
) -> None:
    collector = RunCollectorCallbackHandler()
    with RecallRetriever(base_retriever, metrics=[recall()]) as wrapped:
        make_chain(wrapped).invoke(Q, config={"callbacks": [collector]})
    (root,) = collector.traced_runs
    sample = RecallEvaluator(recall()).sample(root, example())  # type: ignore[arg-type]
    assert [c.id for c in sample.retrieved_contexts] == ["eiffel", "eiffel-1889"]


class OfflineSession(requests.Session):
    """Answers every LangSmith API call with an empty 200: nothing leaves the machine."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    def request(self, method: str | bytes, url: str | bytes, *args: Any, **kwargs: Any) -> Any:
        self.calls.append(f"{method!s} {url!s}")
        response = requests.Response()
        response.status_code = 200
        response._content = b"{}"
        response.headers["Content-Type"] = "application/json"
        response.url = str(url)
        return response


@pytest.mark.filterwarnings("ignore::langsmith._internal._beta_decorator.LangSmithBetaWarning")
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_inside_langsmith_evaluate(
    base_retriever: VectorStoreRetriever,
    make_chain: Any,
    questions: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LANGSMITH_TRACING", "false")
    chain = make_chain(base_retriever)
    data = [
        Example(id=uuid.uuid4(), inputs={"question": q}, outputs={"answer": a})
        for q, a in questions.items()
    ]
    client = Client(api_key="offline", api_url="http://127.0.0.1:9", session=OfflineSession())
    results = evaluate(
        lambda inputs: chain.invoke(inputs["question"]),
        data=data,
        evaluators=[RecallEvaluator(recall())],
        client=client,
        upload_results=False,
        max_concurrency=0,
    )
    scores = [row["evaluation_results"]["results"][0] for row in results]
    assert [(r.key, r.score) for r in scores] == [("context_recall", 1.0)] * 3
