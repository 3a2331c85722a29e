"""Metrics as LCEL runnables."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableLambda, RunnableParallel
from langchain_core.vectorstores import VectorStoreRetriever
from langchain_ragrecall import as_runnable

from ragrecall import ClaimCache, ContextRecall, RecallResult
from ragrecall.testing import ScriptedJudge

Q = "Where is the Eiffel Tower?"
REF = "The Eiffel Tower is in Paris. The Colosseum is in Rome."


def recall(judge: Any = None) -> ContextRecall:
    return ContextRecall(judge or ScriptedJudge(), claims="sentences", cache=ClaimCache())


def test_invoke_and_ainvoke_give_the_metrics_result() -> None:
    runnable = as_runnable(recall())
    sample = {"question": Q, "reference": REF, "contexts": ["The Eiffel Tower is in Paris."]}
    result = runnable.invoke(sample)
    assert isinstance(result, RecallResult) and result.score == 0.5
    assert result.missing == ["The Colosseum is in Rome."]
    assert runnable.get_name() == "context_recall"


async def test_ainvoke_uses_ascore() -> None:
    judge = ScriptedJudge()
    metric = recall(judge)
    called: list[str] = []
    original = metric.ascore

    async def spy(sample: Any, policy: Any = None) -> RecallResult:
        called.append("ascore")
        return await original(sample, policy)

    metric.ascore = spy  # type: ignore[method-assign]
    result = await as_runnable(metric).ainvoke(
        {"question": Q, "reference": REF, "contexts": ["The Colosseum is in Rome."]}
    )
    assert called == ["ascore"] and result.score == 0.5


def test_composes_next_to_a_chain_with_documents_as_contexts(
    base_retriever: VectorStoreRetriever, make_chain: Any
) -> None:
    chain = make_chain(base_retriever)
    retrieve = RunnableLambda(lambda x: {**x, "contexts": base_retriever.invoke(x["question"])})
    both = RunnableParallel(
        answer=RunnableLambda(lambda x: x["question"]) | chain,
        recall=retrieve | as_runnable(recall()),
    )
    out = both.invoke({"question": Q, "reference": REF})
    assert out["answer"].startswith("The Eiffel Tower is in Paris, France.")
    assert out["recall"].score == 0.5
    assert out["recall"].verdicts[0].chunk_ids == ["eiffel"]  # the Document ids


def test_judge_failure_is_an_unscorable_result_not_an_error() -> None:
    judge = ScriptedJudge(reply=lambda m: ValueError("down"))
    result = as_runnable(recall(judge)).invoke({"question": Q, "reference": REF, "contexts": ["x"]})
    assert result.status == "unscorable" and "down" in result.reason
