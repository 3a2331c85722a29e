"""Evaluators over a real index and query engine, judged by the scripted judge."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.evaluation import BaseEvaluator, BatchEvalRunner
from llama_index.core.prompts import PromptTemplate
from llama_index.evaluation.ragrecall import (
    ContextPrecisionEvaluator,
    ContextRecallEvaluator,
    QuestionRecallEvaluator,
    RecallEvaluationResult,
    RecallEvaluator,
    ResponseRecallEvaluator,
    chunks_from_nodes,
)

from ragrecall import ClaimCache, ContextPrecision, ContextRecall, QuestionRecall, ResponseRecall
from ragrecall.testing import ScriptedJudge

QUERY = "Where is the Eiffel Tower?"
REFERENCE = "The Eiffel Tower is in Paris. The Eiffel Tower is made of gold."
MISSING = "The Eiffel Tower is made of gold."


def evaluator(judge: Any = None, **kwargs: Any) -> ContextRecallEvaluator:
    return ContextRecallEvaluator(
        judge or ScriptedJudge(), strategy="per_claim", cache=ClaimCache(), **kwargs
    )


def same(a: RecallEvaluationResult, b: RecallEvaluationResult) -> None:
    fields = ("query", "response", "contexts", "score", "passing", "feedback", "invalid_result")
    assert {f: getattr(a, f) for f in fields} == {f: getattr(b, f) for f in fields}
    assert a.recall is not None and b.recall is not None
    assert a.recall.verdicts == b.recall.verdicts


def test_source_nodes_keep_ids_scores_and_order(query_engine: BaseQueryEngine) -> None:
    response = query_engine.query(QUERY)
    chunks = chunks_from_nodes(response.source_nodes)
    assert [c.id for c in chunks] == ["eiffel", "moon"]
    assert [c.rank for c in chunks] == [1, 2]
    assert [c.score for c in chunks] == [n.score for n in response.source_nodes]
    assert chunks[0].score is not None and chunks[1].score is not None
    assert chunks[0].score > chunks[1].score
    assert chunks[0].metadata == {"doc": "eiffel"}
    assert chunks[0].text == "The Eiffel Tower is in Paris. The Eiffel Tower opened in 1889."


def test_evaluate_response_scores_the_source_nodes(query_engine: BaseQueryEngine) -> None:
    response = query_engine.query(QUERY)
    result = evaluator().evaluate_response(query=QUERY, response=response, reference=REFERENCE)
    assert isinstance(result, RecallEvaluationResult)
    assert result.score == 0.5 and result.passing is True and not result.invalid_result
    assert result.feedback == f"1/2 claims supported.\nMissing:\n- {MISSING}"
    assert result.query == QUERY and result.response == response.response
    assert result.contexts == [n.node.get_content() for n in response.source_nodes]
    assert result.recall is not None
    supported = result.recall.verdicts[0]
    assert supported.chunk_ids == ["eiffel"]  # the node id, not a position
    assert supported.evidence == "The Eiffel Tower is in Paris."


def test_plain_context_strings_still_work() -> None:
    contexts = ["Bananas are yellow.", "The Eiffel Tower is in Paris and opened in 1889."]
    result = evaluator().evaluate(QUERY, "In Paris.", contexts, reference=REFERENCE)
    assert result.score == 0.5
    assert result.recall is not None and result.recall.verdicts[0].chunk_ids == ["2"]


async def test_async_matches_sync(query_engine: BaseQueryEngine) -> None:
    response = await query_engine.aquery(QUERY)
    ev = evaluator()
    other = await ev.aevaluate_response(query=QUERY, response=response, reference=REFERENCE)
    same(ev.evaluate_response(query=QUERY, response=response, reference=REFERENCE), other)


async def test_batch_eval_runner_equals_direct_calls(
    query_engine: BaseQueryEngine, questions: dict[str, tuple[str, str]]
) -> None:
    ev = evaluator(min_score=0.75)
    queries = list(questions)
    references = [ref for ref, _ in questions.values()]
    runner = BatchEvalRunner({"context_recall": ev}, workers=2)
    batch = await runner.aevaluate_queries(query_engine, queries=queries, reference=references)
    direct = [
        ev.evaluate_response(query=q, response=query_engine.query(q), reference=ref)
        for q, ref in zip(queries, references, strict=True)
    ]
    assert [r.score for r in batch["context_recall"]] == [0.5, 1.0, 0.5]
    assert [r.passing for r in batch["context_recall"]] == [False, True, False]
    for got, want in zip(batch["context_recall"], direct, strict=True):
        assert isinstance(got, RecallEvaluationResult)
        same(got, want)


def test_batch_eval_runner_with_context_strings() -> None:
    ev = evaluator()
    runner = BatchEvalRunner({"context_recall": ev}, workers=2)
    results = runner.evaluate_response_strs(
        queries=[QUERY, QUERY],
        response_strs=["Paris.", "Paris."],
        contexts_list=[["The Eiffel Tower is in Paris."], ["Bananas are yellow."]],
        reference=[REFERENCE, REFERENCE],
    )
    assert [r.score for r in results["context_recall"]] == [0.5, 0.0]


def test_judge_failure_is_an_invalid_result_not_an_exception() -> None:
    ev = evaluator(ScriptedJudge(reply=lambda m: ValueError("judge down")))
    result = ev.evaluate(QUERY, "Paris.", ["The Eiffel Tower is in Paris."], reference=REFERENCE)
    assert result.invalid_result is True
    assert result.invalid_reason is not None and "judge down" in result.invalid_reason
    assert result.score is None and result.passing is None
    assert result.recall is not None and result.recall.status == "unscorable"


async def test_batch_runner_passes_unscorable_samples_through(
    query_engine: BaseQueryEngine,
) -> None:
    runner = BatchEvalRunner({"recall": evaluator()}, workers=2)
    results = await runner.aevaluate_queries(
        query_engine, queries=[QUERY, QUERY], reference=[REFERENCE, ""]
    )
    ok, empty = results["recall"]
    assert ok.score == 0.5 and not ok.invalid_result
    assert empty.invalid_result and empty.invalid_reason == "no claims: the reference is empty"


def test_invalid_input_is_an_invalid_result() -> None:
    result = evaluator().evaluate(QUERY, contexts=["a"], reference=REFERENCE, reference_ids=3)
    assert result.invalid_result
    assert result.invalid_reason is not None
    assert result.invalid_reason.startswith("invalid input: reference_ids")


def test_any_metric_through_recall_evaluator() -> None:
    ev = RecallEvaluator(ResponseRecall(ScriptedJudge(), strategy="per_claim", cache=ClaimCache()))
    assert isinstance(ev, BaseEvaluator)
    result = ev.evaluate(QUERY, "The Eiffel Tower is in Paris.", reference=REFERENCE)
    assert result.score == 0.5
    assert result.feedback == f"1/2 claims supported.\nMissing:\n- {MISSING}"


@pytest.mark.parametrize(
    ("cls", "metric"),
    [
        (ContextRecallEvaluator, ContextRecall),
        (ResponseRecallEvaluator, ResponseRecall),
        (QuestionRecallEvaluator, QuestionRecall),
        (ContextPrecisionEvaluator, ContextPrecision),
    ],
)
def test_named_evaluators_build_their_metric(cls: Any, metric: type) -> None:
    judge = ScriptedJudge()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ev = cls(judge, min_score=0.8)
    if metric is QuestionRecall:  # deprecated for Sufficiency: one warning, at this line
        assert [str(w.message) for w in caught if w.category is DeprecationWarning] == [
            "QuestionRecall is deprecated and will be removed in ragrecall 0.3; use "
            "Sufficiency (metric name 'sufficiency')"
        ]
        assert caught[0].filename == __file__
    else:
        assert not [w for w in caught if w.category is DeprecationWarning]
    assert type(ev.metric) is metric and ev.metric.judge is judge and ev.min_score == 0.8


def test_prompts_are_set_on_the_metric() -> None:
    ev = evaluator()
    assert ev.get_prompts() == {}
    with pytest.raises(ValueError, match="decompose_prompt"):
        ev.update_prompts({"decompose": PromptTemplate("{x}")})


def test_min_score_is_checked() -> None:
    with pytest.raises(ValueError, match="min_score"):
        evaluator(min_score=2)


def test_passing_score_is_a_deprecated_alias_of_min_score() -> None:
    with pytest.warns(DeprecationWarning, match="passing_score= is deprecated"):
        ev = evaluator(passing_score=0.75)
    assert ev.min_score == 0.75 and ev.passing_score == 0.75


def test_threshold_is_a_deprecated_alias_of_min_score() -> None:
    with pytest.warns(DeprecationWarning, match="threshold= is deprecated"):
        ev = evaluator(threshold=0.75)
    assert ev.min_score == 0.75


def test_the_named_evaluators_are_made_from_ragrecalls_metric_list() -> None:
    import llama_index.evaluation.ragrecall as package
    from llama_index.evaluation.ragrecall._evaluators import EVALUATORS

    from ragrecall.engines import metric_classes

    judged = [cls for cls in metric_classes() if cls.uses_judge]
    assert list(EVALUATORS) == [f"{cls.__name__}Evaluator" for cls in judged]
    for cls in judged:
        made = getattr(package, f"{cls.__name__}Evaluator")
        assert made is EVALUATORS[made.__name__] and made.metric_class is cls
        assert issubclass(made, RecallEvaluator) and made.__module__.endswith("._evaluators")
    named = {n for n in package.__all__ if n.endswith("Evaluator") and n != "RecallEvaluator"}
    assert named <= set(EVALUATORS)
    assert isinstance(ContextPrecisionEvaluator(ScriptedJudge()).metric, ContextPrecision)
