"""QuestionRecall: sub-questions of the question answered by the contexts; no reference needed.
Deprecated for Sufficiency: built directly, by name or by an adapter, it warns once."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from fakes import ScriptedJudge, TextOnlyJudge
from family_fakes import family_reply, fresh_cache, human

from ragrecall import (
    ContextRecall,
    QuestionRecall,
    QuestionRecallResult,
    Sufficiency,
    SufficiencyResult,
    evaluate,
)
from ragrecall.engines import MetricSpec
from ragrecall.testing import recall_metric

QUESTION = "Which city has the Eiffel Tower and what year did the Eiffel Tower open?"
SAMPLE = {
    "user_input": QUESTION,
    "retrieved_contexts": ["The Eiffel Tower is in the city of Paris.", "Bananas are yellow."],
}
SUBS = ["Which city has the Eiffel Tower?", "what year did the Eiffel Tower open?"]


def metric(judge: Any = None, **kwargs: Any) -> QuestionRecall:
    kwargs.setdefault("cache", fresh_cache())
    with pytest.warns(DeprecationWarning, match="Sufficiency"):
        return QuestionRecall(judge or ScriptedJudge(reply=family_reply), **kwargs)


def family_judge() -> ScriptedJudge:
    return ScriptedJudge(reply=family_reply)


def test_constructing_it_warns_once_naming_sufficiency_and_the_release() -> None:
    with pytest.warns(DeprecationWarning) as caught:
        QuestionRecall(ScriptedJudge(reply=family_reply), cache=fresh_cache())
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "QuestionRecall is deprecated and will be removed in ragrecall 0.3" in message
    assert "use Sufficiency" in message
    assert caught[0].filename == __file__  # the user's line, where Python's filters look


def test_by_name_it_still_scores_and_warns_once() -> None:
    with pytest.warns(DeprecationWarning, match="Sufficiency") as caught:
        built = recall_metric("question_recall", judge=ScriptedJudge(reply=family_reply))
    assert isinstance(built, QuestionRecall) and len(caught) == 1
    with pytest.warns(DeprecationWarning, match="Sufficiency") as caught:
        report = evaluate([SAMPLE], [MetricSpec("question_recall", family_judge)])
    assert len(caught) == 1 and report.scores == {"question_recall": 0.5}
    assert caught[0].filename == __file__  # built on this thread, not the engine's loop


def test_sufficiency_does_not_warn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = Sufficiency(ScriptedJudge(reply=family_reply), cache=fresh_cache()).score(SAMPLE)
        report = evaluate([SAMPLE], [MetricSpec("sufficiency", family_judge)])
    assert isinstance(result, SufficiencyResult) and result.status == "scored"
    assert "sufficiency" in report.scores


def test_answerable_sub_questions_over_all_with_answer_and_what_is_missing() -> None:
    result = metric().score(SAMPLE)
    assert isinstance(result, QuestionRecallResult)
    assert result.metric == "question_recall" and result.status == "scored"
    assert result.score == 0.5
    answered, open_ = result.sub_questions
    assert [answered.question, open_.question] == SUBS
    assert answered.answerable and answered.chunk_ids == ["1"]
    assert answered.answer == "The Eiffel Tower is in the city of Paris."
    assert not open_.answerable and open_.chunk_ids == [] and open_.answer is None
    assert open_.missing == "nothing about what year did the Eiffel Tower open"
    assert result.missing == [SUBS[1]]
    assert result.usage.calls == 3  # one decomposition, two verdicts


def test_passages_come_first_and_are_identical_across_sub_questions() -> None:
    judge = ScriptedJudge(reply=family_reply)
    metric(judge).score(SAMPLE)
    verdict_calls = [human(call) for call in judge.calls[1:]]
    prefixes = {h.split("\n\nQuestion: ")[0] for h in verdict_calls}
    assert len(prefixes) == 1 and prefixes.pop().startswith('Passages:\n<passage id="1">')


async def test_async_matches_sync() -> None:
    sync = metric().score(SAMPLE)
    other = await metric().ascore(SAMPLE)
    assert isinstance(other, QuestionRecallResult) and isinstance(sync, QuestionRecallResult)
    assert other.score == sync.score and other.sub_questions == sync.sub_questions


def test_sub_questions_are_cached_under_their_own_key() -> None:
    cache = fresh_cache()
    judge = ScriptedJudge(reply=family_reply)
    metric(judge, cache=cache).score(SAMPLE)
    before = len(judge.calls)
    metric(judge, cache=cache).score(SAMPLE)
    assert len(judge.calls) - before == 2  # no second decomposition
    # A reference equal to the question is not served the sub-questions as its claims.
    claims = ContextRecall(judge, cache=cache, strategy="per_claim").score(
        {"reference": QUESTION, "retrieved_contexts": SAMPLE["retrieved_contexts"]}
    )
    assert claims.claims == [QUESTION + "."]  # keyword_reply's decomposition


def test_no_question_is_unscorable_without_calls() -> None:
    judge = ScriptedJudge(reply=family_reply)
    result = metric(judge).score({**SAMPLE, "user_input": " "})
    assert (
        result.status == "unscorable" and result.reason == "no question to split into sub-questions"
    )
    assert isinstance(result, QuestionRecallResult)
    assert judge.calls == []


def test_no_contexts_scores_zero_after_only_the_decomposition() -> None:
    judge = ScriptedJudge(reply=family_reply)
    result = metric(judge).score({**SAMPLE, "retrieved_contexts": []})
    assert result.score == 0.0 and result.reason == "no retrieved contexts"
    assert result.missing == SUBS and len(judge.calls) == 1


def test_no_sub_questions_falls_back_to_the_question() -> None:
    def empty(messages: Any) -> Any:
        out = family_reply(messages)
        return {"questions": []} if "questions" in out else out

    result = metric(ScriptedJudge(reply=empty)).score(SAMPLE)
    assert isinstance(result, QuestionRecallResult)
    assert [s.question for s in result.sub_questions] == [QUESTION]
    assert result.reason == "the judge returned no sub-questions; used the question"


def test_an_invalid_citation_keeps_the_answer_without_a_chunk() -> None:
    def bad_cite(messages: Any) -> Any:
        out = family_reply(messages)
        return {**out, "passage": 7} if out.get("answerable") else out

    result = metric(ScriptedJudge(reply=bad_cite)).score(SAMPLE)
    assert isinstance(result, QuestionRecallResult)
    verdict = result.sub_questions[0]
    assert verdict.answerable and verdict.chunk_ids == []
    assert verdict.reason == "answered; the judge cited no valid passage (7)"


def test_long_contexts_are_packed_and_any_window_can_answer() -> None:
    filler = "Filler sentence about nothing. " * 40
    sample = {
        "user_input": "Which city has the Eiffel Tower?",
        "retrieved_contexts": [filler, filler, "The Eiffel Tower is in the city of Paris."],
    }
    judge = ScriptedJudge(reply=family_reply)
    result = metric(judge, window_tokens=1100).score(sample)
    assert isinstance(result, QuestionRecallResult)
    assert result.score == 1.0 and result.sub_questions[0].chunk_ids == ["3"]
    assert len(judge.calls) == 1 + 2  # decomposition, then one call per window


def test_parser_fallback_and_malformed_replies() -> None:
    assert metric(TextOnlyJudge(reply=family_reply)).score(SAMPLE).score == 0.5
    broken = metric(TextOnlyJudge(reply=lambda m: "{")).score(SAMPLE)
    assert broken.status == "unscorable" and "SubQuestions" not in broken.reason
    assert "invalid reply after a re-ask" in broken.reason


def test_every_reply_is_capped_where_the_judge_takes_max_tokens() -> None:
    # Its replies had no cap: on a HotpotQA question the embedded judge's sub-questions ran
    # until each of four tries timed out (1,208 s, then unscorable). Capped as Sufficiency's.
    from faultserver import FaultServer
    from langchain_openai import ChatOpenAI

    sample = {"user_input": "How tall is the Eiffel Tower?", "retrieved_contexts": ["330 m."]}
    with FaultServer(faults=False, lifetime=60) as server:
        judge = ChatOpenAI(base_url=server.url, api_key="x", model="m", max_retries=0)  # type: ignore[arg-type]
        with pytest.warns(DeprecationWarning):
            QuestionRecall(judge, cache=fresh_cache()).score(sample)
    caps = [request.max_tokens for request in server.log]
    assert len(caps) >= 2 and None not in caps, caps  # sub-questions, then an answer
