"""Sufficiency in a conversation: the question made to stand alone (checked, cached), open
sub-questions credited to earlier turns' contexts, and a sample without history unchanged."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.messages import BaseMessage

from ragrecall import ClaimCache, Sample, SampleError, Sufficiency, SufficiencyResult, load_samples
from ragrecall.testing import ScriptedJudge, TextOnlyJudge, keyword_reply

PARIS = "The Eiffel Tower is in Paris, France."
BUILT = "The Eiffel Tower was completed in 1889."
TALL = "The Eiffel Tower is 330 metres tall."
BANANAS = "Bananas are rich in potassium."
FIRST = {"question": "Where is the Eiffel Tower?", "answer": "In Paris.", "contexts": [PARIS]}


def metric(judge: Any = None, **kwargs: Any) -> Sufficiency:
    kwargs.setdefault("cache", ClaimCache())
    return Sufficiency(judge or ScriptedJudge(), **kwargs)


def scored(result: Any) -> SufficiencyResult:
    assert isinstance(result, SufficiencyResult), result
    assert result.status == "scored", result.reason
    return result


def asked(judge: ScriptedJudge, words: str) -> int:
    """How many prompts sent to ``judge`` had ``words`` in their system message."""
    return sum(words in str(call[0].content) for call in judge.calls)


def rewriting(rewrite: str) -> Any:
    """A judge that rewrites every question to ``rewrite`` and otherwise answers by rule."""

    def reply(messages: Sequence[BaseMessage]) -> Any:
        if "can be understood" in str(messages[0].content):
            return {"standalone": rewrite}
        return keyword_reply(messages)

    return reply


def test_a_sample_without_history_asks_no_more_and_shows_no_rewrite() -> None:
    sample = {"user_input": "When was the Eiffel Tower completed?", "contexts": [BUILT]}
    judge = ScriptedJudge()
    result = scored(metric(judge).score(sample))
    assert result.score == 1.0 and result.standalone_question is None
    assert len(judge.calls) == 2  # the split and one verdict, as before
    assert asked(judge, "can be understood") == 0
    assert all(v.turn is None for v in result.sub_questions)


def test_the_question_is_made_to_stand_alone_and_shown() -> None:
    judge = ScriptedJudge()
    sample = {"history": [FIRST], "user_input": "When was it completed?", "contexts": [BUILT]}
    result = scored(metric(judge).score(sample))
    assert result.standalone_question == "When was the Eiffel Tower completed?"
    assert [v.question for v in result.sub_questions] == [result.standalone_question]
    assert result.score == 1.0 and result.sub_questions[0].turn is None
    assert result.reason == ""
    prompt = str(judge.calls[0][1].content)
    assert "Turn 1\nUser: Where is the Eiffel Tower?\nAssistant: In Paris." in prompt


def test_the_rewrite_is_cached_like_sub_questions() -> None:
    cache = ClaimCache()
    sample = {"history": [FIRST], "user_input": "When was it completed?", "contexts": [BUILT]}
    first, second = ScriptedJudge(), ScriptedJudge()
    scored(metric(first, cache=cache).score(sample))
    again = scored(metric(second, cache=cache).score(sample))
    assert asked(first, "can be understood") == 1 and asked(second, "can be understood") == 0
    assert again.standalone_question == "When was the Eiffel Tower completed?"


@pytest.mark.parametrize(
    ("rewrite", "why"),
    [
        ("When was the Statue of Liberty completed?", "it adds 'liberty', 'statue'"),
        ("When was the Eiffel Tower built?", "it drops 'completed'"),
        ("", "it is empty"),
    ],
)
def test_a_rewrite_that_changes_the_question_is_refused(rewrite: str, why: str) -> None:
    sample = {"history": [FIRST], "user_input": "When was it completed?", "contexts": [BUILT]}
    result = scored(metric(ScriptedJudge(reply=rewriting(rewrite))).score(sample))
    assert result.standalone_question == "When was it completed?"
    assert why in result.reason and "refused" in result.reason


def test_a_question_that_stands_alone_is_kept() -> None:
    question = "How tall is the Eiffel Tower?"
    sample = {"history": [FIRST], "user_input": question, "contexts": [TALL]}
    result = scored(metric().score(sample))
    assert result.standalone_question == question and result.reason == ""


def test_an_open_sub_question_is_credited_to_the_earlier_turn_that_answers_it() -> None:
    second = {"question": "How tall is it?", "answer": "330 metres.", "contexts": [BANANAS]}
    history = [{**FIRST, "contexts": [PARIS, BUILT]}, second]
    sample = {
        "history": history,
        "user_input": "When was it completed, and how tall is it?",
        "contexts": [TALL],
    }
    judge = ScriptedJudge()
    result = scored(metric(judge).score(sample))
    when, tall = result.sub_questions
    assert result.score == 1.0
    assert when.answerable and when.turn == 1 and when.chunk_ids == ["2"]
    assert "turn 1" in when.reason and when.evidence_verified
    assert tall.answerable and tall.turn is None
    # only the open sub-question is asked of the earlier turns: turn 2, then turn 1
    verdicts = [c for c in judge.calls if "check whether numbered" in str(c[0].content)]
    assert len(verdicts) == 2 + 2


def test_credit_history_false_scores_this_turns_retrieval_alone() -> None:
    history = [{**FIRST, "contexts": [BUILT]}]
    sample = {"history": history, "user_input": "When was it completed?", "contexts": [PARIS]}
    judge = ScriptedJudge()
    result = scored(metric(judge, credit_history=False).score(sample))
    assert result.score == 0.0 and result.sub_questions[0].turn is None
    assert result.standalone_question == "When was the Eiffel Tower completed?"
    credited = scored(metric().score(sample))
    assert credited.score == 1.0 and credited.sub_questions[0].turn == 1


def test_no_contexts_this_turn_can_still_be_answered_by_the_conversation() -> None:
    history = [{**FIRST, "contexts": [BUILT]}]
    sample = {"history": history, "user_input": "When was it completed?", "contexts": []}
    result = scored(metric().score(sample))
    assert result.score == 1.0 and result.sub_questions[0].turn == 1
    assert result.reason == "no retrieved contexts"


def test_chat_messages_are_read_as_the_history_and_the_question() -> None:
    sample = Sample.model_validate(
        {
            "messages": [
                {"role": "system", "content": "You answer questions about Paris."},
                {"role": "user", "content": "Where is the Eiffel Tower?"},
                {"role": "assistant", "content": "In Paris."},
                {"role": "user", "content": "When was it completed?"},
                {"role": "assistant", "content": "In 1889."},
            ],
            "retrieved_contexts": [BUILT],
        }
    )
    assert sample.user_input == "When was it completed?" and sample.response == "In 1889."
    assert sample.history is not None
    assert [(t.question, t.answer) for t in sample.history] == [
        ("Where is the Eiffel Tower?", "In Paris.")
    ]
    result = scored(metric().score(sample))
    assert result.standalone_question == "When was the Eiffel Tower completed?"


def test_a_ragas_multi_turn_user_input_is_read_as_messages() -> None:
    sample = Sample.model_validate(
        {
            "user_input": [
                {"type": "human", "content": "Where is the Eiffel Tower?"},
                {"type": "ai", "content": "In Paris."},
                {"type": "human", "content": "When was it completed?"},
            ],
            "retrieved_contexts": [BUILT],
        }
    )
    assert sample.user_input == "When was it completed?" and sample.response is None
    assert sample.history is not None and sample.history[0].answer == "In Paris."


@pytest.mark.parametrize(
    ("row", "field", "words"),
    [
        ({"user_input": "q", "history": [FIRST, {"answer": "x"}]}, "history[1].question", ""),
        (
            {"user_input": "q", "history": [{"question": " "}]},
            "history[0].question",
            "needs its question",
        ),
        (
            {"user_input": "q", "history": [{**FIRST, "contexts": "x"}]},
            "history[0]",
            "got one string",
        ),
        ({"user_input": "q", "history": "Where?"}, "history", ""),
        ({"messages": [{"role": "bot", "content": "hi"}]}, "messages[0]", "role 'bot'"),
        ({"messages": [{"role": "assistant", "content": "hi"}]}, "messages", "no user message"),
        ({"messages": [{"role": "user", "content": 3}]}, "messages[0]", "must be text"),
        ({"messages": [{"role": "user", "content": "a"}], "history": [FIRST]}, "messages", "both"),
        ({"messages": [{"role": "user", "content": "a"}], "user_input": "b"}, "messages", "last"),
        ({"user_input": [{"type": "ai", "content": "hi"}]}, "user_input", "no user message"),
        ({"user_input": []}, "user_input", "valid string"),
    ],
)
def test_bad_history_is_refused_naming_the_turn_and_field(
    row: dict[str, Any], field: str, words: str
) -> None:
    with pytest.raises(SampleError) as caught:
        load_samples([row])
    assert caught.value.row == 0
    assert caught.value.field is not None and caught.value.field.startswith(field)
    assert words in str(caught.value)


def test_sync_and_async_agree_on_both_judges() -> None:
    history = [{**FIRST, "contexts": [PARIS, BUILT]}]
    sample = {"history": history, "user_input": "When was it completed?", "contexts": [TALL]}
    for judge in (ScriptedJudge, TextOnlyJudge):
        sync = scored(metric(judge()).score(sample))
        async_ = scored(asyncio.run(metric(judge()).ascore(sample)))
        keep = {"usage", "elapsed_s", "judge"}
        assert sync.model_dump(exclude=keep) == async_.model_dump(exclude=keep)
        assert sync.sub_questions[0].turn == 1
