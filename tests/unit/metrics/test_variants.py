"""Verdict variants: the combination math, the band and K settings, no extra call for a sure
claim, and sync and async sharing the steps (scripted judges with logprobs)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from langchain_core.messages import AIMessage

from ragrecall import ClaimCache, ContextRecall
from ragrecall._metrics.verdicts.variants import combine, label_probability, mean_probability
from ragrecall.testing import TextOnlyJudge


def _logit(p: float) -> float:
    return math.log(p / (1 - p))


def test_variants_are_moved_onto_the_base_scale_and_averaged_in_log_odds() -> None:
    asked = combine(0.7, [(0.8, 0.6), (0.5, 0.5)], base_free=0.4)
    assert asked[0] == 0.7
    # variant 1: its log-odds less its own baseline's, plus the base prompt's baseline
    assert _logit(asked[1]) == pytest.approx(_logit(0.8) - _logit(0.6) + _logit(0.4))
    assert asked[2] == pytest.approx(0.4)  # no better than content-free: the base's bias
    mean = mean_probability(asked)
    assert _logit(mean) == pytest.approx(sum(map(_logit, asked)) / 3)
    assert mean_probability([0.9]) == pytest.approx(0.9)
    assert 0 < mean_probability([0.0, 1.0, 1.0]) < 1  # clipped, never infinite


def test_label_probability_reads_the_first_label_token() -> None:
    alts = [{"token": " Yes", "logprob": math.log(0.6)}, {"token": "no", "logprob": math.log(0.2)}]
    raw = AIMessage(
        content="",
        response_metadata={"logprobs": {"content": [{**alts[0], "top_logprobs": alts}]}},
    )
    assert label_probability(raw, "yes", "no") == pytest.approx(0.75)
    assert label_probability(raw, "true", "false") is None
    assert label_probability(None, "yes", "no") is None


def _lp(p: float, yes: str = "true", no: str = "false") -> dict[str, Any]:
    alts = [{"token": yes, "logprob": math.log(p)}, {"token": no, "logprob": math.log(1 - p)}]
    return {"logprobs": {"content": [{**alts[0], "top_logprobs": alts}]}}


def _judge(p_base: dict[str, float]) -> TextOnlyJudge:
    """Base P by claim word; the yes/no variant says base + 0.1; the flipped one agrees."""

    def reply(messages: Any) -> Any:
        human = next(str(m.content) for m in messages if m.type == "human")
        prefix = str(messages[-1].content) if isinstance(messages[-1], AIMessage) else ""
        claim = human.split("Claim: ", 1)[1].split("\n")[0]
        base = next((p for word, p in p_base.items() if word in claim), 0.5)
        if prefix == "Answer:":
            return AIMessage(content="", response_metadata=_lp(base + 0.1, "yes", "no"))
        if prefix.startswith('{"unsupported"'):
            return AIMessage(content="", response_metadata=_lp(1 - base))
        return AIMessage(content="", response_metadata=_lp(base))

    return TextOnlyJudge(reply=reply)


SAMPLE = {
    "user_input": "q",
    "reference": "The Eiffel Tower is in Paris. The tower is made of gold.",
    "retrieved_contexts": ["The tower stands in Paris, France.", "Gold is a metal."],
}
P_BASE = {"Paris": 0.6, "gold": 0.02, "N/A": 0.5}


def _recall(judge: TextOnlyJudge, **kwargs: Any) -> ContextRecall:
    return ContextRecall(
        judge,
        claims="sentences",
        strategy="per_claim",
        verdict="token",
        cache=ClaimCache(),
        **kwargs,
    )


def test_an_uncertain_claim_is_asked_again_and_a_sure_one_is_not() -> None:
    judge = _judge(P_BASE)
    result = _recall(judge, variants=2, variant_band=0.2).score(SAMPLE)
    paris, gold = result.verdicts
    # margin of Paris: 0.7 * 0.6 + 0.3 * overlap - 0.55, within 0.2; gold is far below
    assert len(paris.p_variants) == 3 and paris.p_variants[0] == pytest.approx(0.6)
    assert paris.p_supported == pytest.approx(mean_probability(paris.p_variants))
    assert gold.p_variants == [] and gold.p_supported == pytest.approx(0.02)
    # 2 base verdicts, 3 content-free baselines (base and two variants), 2 variants
    assert result.usage.calls == 7


def test_content_free_baselines_are_asked_once_per_metric() -> None:
    judge = _judge(P_BASE)
    recall = _recall(judge, variants=2, variant_band=0.2)
    first, second = recall.score(SAMPLE), recall.score(SAMPLE)
    assert first.usage.calls == 7 and second.usage.calls == 4
    free = [m for m in judge.calls if "Claim: N/A" in str(m[1].content)]
    assert len(free) == 3 and all("Passages:\nN/A" in str(m[1].content) for m in free)
    assert second.verdicts == first.verdicts


def test_k_and_the_band_are_settings() -> None:
    one = _recall(_judge(P_BASE), variants=1, variant_band=0.2).score(SAMPLE)
    assert len(one.verdicts[0].p_variants) == 2 and one.usage.calls == 2 + 2 + 1
    off = _recall(_judge(P_BASE), variants=0).score(SAMPLE)
    assert off.usage.calls == 2 and all(v.p_variants == [] for v in off.verdicts)
    narrow = _recall(_judge(P_BASE), variants=2, variant_band=0.001).score(SAMPLE)
    assert narrow.usage.calls == 2
    with pytest.raises(ValueError, match="variants"):
        ContextRecall(variants=4)
    with pytest.raises(ValueError, match="variant_band"):
        ContextRecall(variant_band=2.0)


def test_sure_claims_cost_nothing_extra() -> None:
    sure = {"Paris": 0.99, "gold": 0.01}
    result = _recall(_judge(sure), variants=3, variant_band=0.1).score(SAMPLE)
    assert result.usage.calls == 2 and all(v.p_variants == [] for v in result.verdicts)


async def test_async_refines_the_same() -> None:
    sync = _recall(_judge(P_BASE), variants=2, variant_band=0.2).score(SAMPLE)
    other = await _recall(_judge(P_BASE), variants=2, variant_band=0.2).ascore(SAMPLE)
    assert other.verdicts == sync.verdicts and other.usage.calls == sync.usage.calls


def test_variants_are_off_by_default() -> None:
    result = _recall(_judge(P_BASE)).score(SAMPLE)
    assert result.usage.calls == 2 and all(v.p_variants == [] for v in result.verdicts)


def test_a_budget_reserves_the_variants_a_sample_may_need() -> None:
    """The budget admits a sample by its estimate, variants included: 2 verdicts + up to 2
    variants each + 3 baselines = 9 calls, so a budget of 5 starts nothing and one of 9 fits
    the 7 calls made."""
    from ragrecall import evaluate

    small = evaluate([SAMPLE], [_recall(_judge(P_BASE), variants=2, variant_band=0.2)], max_calls=5)
    assert small.usage.calls == 0 and small.budget_spent
    enough = evaluate(
        [SAMPLE], [_recall(_judge(P_BASE), variants=2, variant_band=0.2)], max_calls=9
    )
    assert enough.usage.calls == 7
