"""ResponseRecall: the reference's claims checked against the response (ContextRecall's steps)."""

from __future__ import annotations

from typing import Any

from fakes import ScriptedJudge, TextOnlyJudge, keyword_reply
from family_fakes import fresh_cache

from ragrecall import ContextRecall, ResponseRecall, evaluate

SAMPLE = {
    "user_input": "Tell me about the Eiffel Tower.",
    "reference": "The Eiffel Tower is in Paris. The Eiffel Tower is made of gold.",
    "response": "The Eiffel Tower is in Paris and opened in 1889.",
    # The contexts state both claims: they must not count, only the response does.
    "retrieved_contexts": ["The Eiffel Tower is in Paris.", "The Eiffel Tower is made of gold."],
}


def metric(judge: Any, **kwargs: Any) -> ResponseRecall:
    kwargs.setdefault("cache", fresh_cache())
    kwargs.setdefault("strategy", "per_claim")
    return ResponseRecall(judge=judge, **kwargs)


def test_scores_claims_stated_by_the_response_with_evidence_from_it() -> None:
    result = metric(ScriptedJudge()).score(SAMPLE)
    assert result.metric == "response_recall" and result.status == "scored"
    assert result.score == 0.5
    stated, left_out = result.verdicts
    assert stated.attributed and stated.chunk_ids == ["response"]
    assert stated.evidence == SAMPLE["response"] and stated.evidence_verified
    assert not left_out.attributed
    assert result.missing == ["The Eiffel Tower is made of gold."]
    assert result.usage.calls == 3  # one decomposition, two verdicts


def test_the_response_is_the_only_passage() -> None:
    judge = ScriptedJudge()
    metric(judge, claims="sentences").score(SAMPLE)
    human = next(str(m.content) for m in judge.calls[0] if m.type == "human")
    assert human.startswith(f'Passages:\n<passage id="1">\n{SAMPLE["response"]}\n</passage>\n\n')


async def test_async_matches_sync() -> None:
    sync = metric(ScriptedJudge()).score(SAMPLE)
    other = await metric(ScriptedJudge()).ascore(SAMPLE)
    assert other.score == sync.score and other.verdicts == sync.verdicts


def test_missing_or_blank_response_is_unscorable_without_calls() -> None:
    for response in (None, "   "):
        judge = ScriptedJudge()
        result = metric(judge).score({**SAMPLE, "response": response})
        assert result.status == "unscorable" and result.score is None
        assert result.reason == "no response to check the reference's claims against"
        assert judge.calls == []


def test_empty_reference_is_unscorable() -> None:
    result = metric(ScriptedJudge()).score({**SAMPLE, "reference": ""})
    assert result.status == "unscorable" and result.reason == "no claims: the reference is empty"


def test_claims_are_shared_with_context_recall_through_the_cache() -> None:
    cache = fresh_cache()
    judge = ScriptedJudge()
    ContextRecall(judge, cache=cache, strategy="per_claim").score(SAMPLE)
    before = len(judge.calls)
    result = metric(judge, cache=cache).score(SAMPLE)
    assert len(judge.calls) - before == 2  # verdicts only: the claims came from the cache
    assert result.score == 0.5


def test_batched_quotes_are_verified_against_the_response() -> None:
    judge = ScriptedJudge()
    result = metric(judge, claims="sentences", strategy="batched").score(SAMPLE)
    assert len(judge.calls) == 1 and result.score == 0.5
    assert result.verdicts[0].evidence_verified and result.verdicts[0].chunk_ids == ["response"]


def test_a_quote_not_in_the_response_does_not_count() -> None:
    def liar(messages: Any) -> Any:
        return {"supported": True, "passage": 1, "quote": "The Eiffel Tower is made of gold."}

    result = metric(ScriptedJudge(reply=liar), claims="sentences", evidence="quote").score(SAMPLE)
    assert result.score == 0.0
    assert "quote is not in the passages" in result.verdicts[1].reason


def test_parser_fallback_judge() -> None:
    result = metric(TextOnlyJudge(reply=keyword_reply)).score(SAMPLE)
    assert result.score == 0.5


def test_runs_in_evaluate_beside_context_recall() -> None:
    judge = ScriptedJudge()
    cache = fresh_cache()
    metrics = [
        ContextRecall(judge, cache=cache, strategy="per_claim"),
        metric(judge, cache=cache),
    ]
    report = evaluate([SAMPLE], metrics, concurrency=1)
    assert report.scores == {"context_recall": 1.0, "response_recall": 0.5}
