"""ChunkRecall: relevant chunks reflected in the answer, with what is missing, per chunk."""

from __future__ import annotations

from typing import Any

from fakes import ScriptedJudge, TextOnlyJudge
from family_fakes import family_reply, human

from ragrecall import ChunkRecall, ChunkRecallResult, ContextPrecision

SAMPLE = {
    "user_input": "Tell me about the Eiffel Tower.",
    "response": "The Eiffel Tower is in Paris.",
    "retrieved_contexts": [
        "The Eiffel Tower is in Paris.",
        "Bananas are yellow.",
        "The Eiffel Tower opened in 1889.",
    ],
}


def metric(judge: Any = None, **kwargs: Any) -> ChunkRecall:
    kwargs.setdefault("strategy", "per_chunk")
    return ChunkRecall(judge or ScriptedJudge(reply=family_reply), **kwargs)


def test_relevant_chunks_reflected_over_relevant_chunks_with_missing_info() -> None:
    result = metric().score(SAMPLE)
    assert isinstance(result, ChunkRecallResult)
    assert result.metric == "chunk_recall" and result.status == "scored"
    assert result.score == 0.5
    reflected, irrelevant, gap = result.chunks
    assert (reflected.chunk_id, reflected.relevant, reflected.reflected) == ("1", True, True)
    assert reflected.evidence == "The Eiffel Tower is in Paris." and reflected.missing is None
    assert (irrelevant.chunk_id, irrelevant.relevant, irrelevant.reflected) == ("2", False, None)
    assert (gap.chunk_id, gap.relevant, gap.reflected) == ("3", True, False)
    assert gap.missing == "The Eiffel Tower opened in 1889." and gap.evidence is None
    assert gap.reason == "the judge found no support"
    assert result.missing == ["The Eiffel Tower opened in 1889."]
    # Relevance of three chunks; reflection of one: the answer states chunk 1 word for word.
    assert result.usage.calls == 3 + 1


def test_prompts_put_the_shared_part_first_and_the_chunk_last() -> None:
    judge = ScriptedJudge(reply=family_reply)
    metric(judge).score(SAMPLE)
    humans = [human(call) for call in judge.calls]
    relevance, (reflection,) = humans[:3], humans[3:]  # chunk 1 is stated word for word
    prefix = "Question: Tell me about the Eiffel Tower.\nReference answer: (not given)\n\nPassage:"
    assert all(h.startswith(prefix) for h in relevance)
    answer = '<passage id="1">\nThe Eiffel Tower is in Paris.\n</passage>'
    assert reflection.startswith("Passages:\n" + answer)
    assert reflection.endswith("Claim: The Eiffel Tower opened in 1889.")


async def test_async_matches_sync() -> None:
    sync = metric().score(SAMPLE)
    other = await metric().ascore(SAMPLE)
    assert other.model_dump(exclude={"elapsed_s"}) == sync.model_dump(exclude={"elapsed_s"})


def test_batched_is_one_call_per_step() -> None:
    judge = ScriptedJudge(reply=family_reply)
    result = metric(judge, strategy="batched").score(SAMPLE)
    assert len(judge.calls) == 2
    assert result.score == 0.5 and result.missing == ["The Eiffel Tower opened in 1889."]


def test_batched_relevance_out_of_order_reasks_then_falls_back_per_chunk() -> None:
    def shuffled(messages: Any) -> Any:
        out = family_reply(messages)
        if "verdicts" in out and "relevant" in out["verdicts"][0]:
            out["verdicts"] = out["verdicts"][::-1]
        return out

    judge = ScriptedJudge(reply=shuffled)
    result = metric(judge, strategy="batched").score(SAMPLE)
    assert result.status == "scored" and result.score == 0.5
    assert len(judge.calls) == 2 + 3 + 1  # batched + re-ask, per chunk, batched reflection
    assert "expected verdicts for passages [1, 2, 3] in order" in str(judge.calls[1][-1].content)


def test_no_relevant_chunk_scores_one_with_the_reason() -> None:
    judge = ScriptedJudge(reply=family_reply)
    sample = {**SAMPLE, "retrieved_contexts": ["Bananas are yellow.", "Apples are red."]}
    result = metric(judge).score(sample)
    assert result.status == "scored" and result.score == 1.0
    assert result.reason == "no retrieved chunk is relevant to the question: nothing to reflect"
    assert result.missing == [] and len(judge.calls) == 2  # no reflection step


def test_no_contexts_scores_one_without_calls() -> None:
    judge = ScriptedJudge(reply=family_reply)
    result = metric(judge).score({**SAMPLE, "retrieved_contexts": ["  "]})
    assert result.score == 1.0 and result.reason == "no retrieved contexts: nothing to reflect"
    assert judge.calls == []


def test_empty_response_or_question_is_unscorable_without_calls() -> None:
    judge = ScriptedJudge(reply=family_reply)
    no_answer = metric(judge).score({**SAMPLE, "response": ""})
    assert no_answer.status == "unscorable" and no_answer.score is None
    assert no_answer.reason == "no response to check the chunks against"
    assert isinstance(no_answer, ChunkRecallResult) and no_answer.chunks == []
    no_question = metric(judge).score({**SAMPLE, "user_input": None})
    assert no_question.reason == "no question: relevance is judged against it"
    assert judge.calls == []


def test_malformed_replies_make_it_unscorable() -> None:
    result = metric(TextOnlyJudge(reply=lambda m: "no json")).score(SAMPLE)
    assert result.status == "unscorable" and "invalid reply after a re-ask" in result.reason
    assert isinstance(result, ChunkRecallResult)


def test_parser_fallback_judge() -> None:
    assert metric(TextOnlyJudge(reply=family_reply)).score(SAMPLE).score == 0.5


def test_given_parts_share_their_judge() -> None:
    judge = ScriptedJudge(reply=family_reply)
    chunk_recall = ChunkRecall(relevance=ContextPrecision(judge, strategy="per_chunk"))
    assert chunk_recall.judge is judge
    assert chunk_recall.score(SAMPLE).score == 0.5


def test_a_chunk_larger_than_the_window_is_judged_in_parts_and_merged() -> None:
    filler = "Filler sentence about nothing. " * 80
    sample = {**SAMPLE, "retrieved_contexts": [filler + "The Eiffel Tower opened in 1889."]}
    judge = ScriptedJudge(reply=family_reply)
    relevance = ContextPrecision(judge, strategy="per_chunk", window_tokens=1100)
    result = metric(judge, relevance=relevance).score(sample)
    assert len(judge.calls) == 2 + 1  # relevance of two parts of one chunk, one reflection
    assert isinstance(result, ChunkRecallResult) and len(result.chunks) == 1
    assert result.chunks[0].relevant and result.score == 0.0
    assert result.missing[0].endswith("The Eiffel Tower opened in 1889.")
